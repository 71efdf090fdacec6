package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func init() {
	register("G01", "SendSync/SendAsync/SendOneWay with tags/keys/props; push consume; fields compared", 90*time.Second, g01)
	register("G02", "batch send (SEND_BATCH_MESSAGE 320); consume, own UNIQ_KEYs, consecutive offsets", 60*time.Second, g02)
	register("G03", "push clustering, 2 instances split 8 queues 4/4; stop one => survivor owns all within 25 s", 120*time.Second, g03)
	register("G04", "broadcast: 2 instances each receive all messages", 60*time.Second, g04)
	register("G09", "admin: CreateTopic (verified via route), FetchAllTopicList, GetAllSubscriptionGroup, DeleteTopic", 60*time.Second, g09)
}

func body(i, size int) []byte {
	head := fmt.Sprintf("body-%d-%s|", i, cfg.runID)
	if size <= len(head) {
		return []byte(head[:size])
	}
	b := make([]byte, size)
	copy(b, head)
	for j := len(head); j < size; j++ {
		b[j] = byte('a' + (i+j)%26)
	}
	return b
}

// checkDenseOffsets: per queue, the offsets of the collected first deliveries for `topic` must be 0..n-1.
func checkDenseOffsets(c *collector, topic string, extra ...*primitive.SendResult) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	per := map[int]map[int64]bool{}
	for _, r := range extra { // messages that were sent but (by design) not delivered
		if per[r.MessageQueue.QueueId] == nil {
			per[r.MessageQueue.QueueId] = map[int64]bool{}
		}
		per[r.MessageQueue.QueueId][r.QueueOffset] = true
	}
	for _, d := range c.first {
		if d.msg.Topic != topic {
			continue
		}
		q := d.msg.Queue.QueueId
		if per[q] == nil {
			per[q] = map[int64]bool{}
		}
		per[q][d.msg.QueueOffset] = true
	}
	for q, offs := range per {
		for o := int64(0); o < int64(len(offs)); o++ {
			if !offs[o] {
				return fmt.Errorf("queue %d: offsets not dense from 0 (%d msgs, missing %d)", q, len(offs), o)
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
func g01(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 4); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()

	const n = 30
	sizes := []int{1, 100, 1024, 5000, 200 * 1024} // 5000 and 200K exceed the 4 KiB compression threshold
	msgs := make([]*primitive.Message, n+1)
	for i := 0; i <= n; i++ {
		kind := []string{"sync", "async", "oneway"}[i/10%3]
		tag := "TagA"
		if i%2 == 1 {
			tag = "TagB"
		}
		if i == n {
			kind, tag = "sync", "TagC" // filtered out by the subscription
		}
		m := primitive.NewMessage(topic, body(i, sizes[i%len(sizes)]))
		m.WithTag(tag)
		m.WithKeys([]string{fmt.Sprintf("k%d_%s", i, cfg.runID), fmt.Sprintf("kk%d", i)})
		m.WithProperty("idx", strconv.Itoa(i))
		m.WithProperty("kind", kind)
		m.WithProperty("u_p", "v with spaces=;&|ünï")
		msgs[i] = m
	}
	msgIDs := map[int]string{}
	var tagC *primitive.SendResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sendErrs []string
	tSend0 := time.Now()
	for i := 0; i <= n; i++ {
		m := msgs[i]
		switch m.GetProperty("kind") {
		case "sync":
			r, err := p.SendSync(ctx, m)
			if err != nil || r.Status != primitive.SendOK {
				return "", fmt.Errorf("SendSync %d: %v %v", i, err, r)
			}
			if r.MsgID == "" || r.OffsetMsgID == "" || r.MessageQueue == nil {
				return "", fmt.Errorf("SendSync %d: incomplete result %v", i, r)
			}
			msgIDs[i] = r.MsgID
			if i == n {
				tagC = r
			}
		case "async":
			wg.Add(1)
			i := i
			err := p.SendAsync(ctx, func(_ context.Context, r *primitive.SendResult, err error) {
				defer wg.Done()
				mu.Lock()
				defer mu.Unlock()
				if err != nil || r.Status != primitive.SendOK {
					sendErrs = append(sendErrs, fmt.Sprintf("async %d: %v %v", i, err, r))
					return
				}
				msgIDs[i] = r.MsgID
			}, m)
			if err != nil {
				wg.Done()
				return "", fmt.Errorf("SendAsync %d: %v", i, err)
			}
		case "oneway":
			if err := p.SendOneWay(ctx, m); err != nil {
				return "", fmt.Errorf("SendOneWay %d: %v", i, err)
			}
		}
	}
	wg.Wait()
	tSend1 := time.Now()
	if len(sendErrs) > 0 {
		return "", fmt.Errorf("%s", strings.Join(sendErrs, "; "))
	}

	col := newCollector()
	c, err := newPushConsumer(cg, name(id, "c1"))
	if err != nil {
		return "", err
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA || TagB"}, col.handler("c1", nil)); err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", fmt.Errorf("consumer start: %w", err)
	}
	defer c.Shutdown()
	tc0 := time.Now()
	if err := col.waitUnique(ctx, n, 40*time.Second); err != nil {
		return "", err
	}
	consumeMs := time.Since(tc0).Milliseconds()
	sleepCtx(ctx, 1500*time.Millisecond) // grace: no TagC, no extra
	var problems []string
	col.mu.Lock()
	seen := map[int]bool{}
	for u, d := range col.first {
		m := d.msg
		idx, err := strconv.Atoi(m.GetProperty("idx"))
		if err != nil || idx < 0 || idx > n {
			problems = append(problems, "unexpected message "+u)
			continue
		}
		seen[idx] = true
		want := msgs[idx]
		if idx == n {
			problems = append(problems, "TagC message delivered despite subscription TagA || TagB")
		}
		if m.Topic != topic {
			problems = append(problems, fmt.Sprintf("%d: topic %q", idx, m.Topic))
		}
		if !bytes.Equal(m.Body, want.Body) {
			problems = append(problems, fmt.Sprintf("%d: body differs (len %d vs %d)", idx, len(m.Body), len(want.Body)))
		}
		if m.GetTags() != want.GetTags() {
			problems = append(problems, fmt.Sprintf("%d: tags %q want %q", idx, m.GetTags(), want.GetTags()))
		}
		if m.GetKeys() != want.GetKeys() {
			problems = append(problems, fmt.Sprintf("%d: keys %q want %q", idx, m.GetKeys(), want.GetKeys()))
		}
		for _, k := range []string{"idx", "kind", "u_p"} {
			if m.GetProperty(k) != want.GetProperty(k) {
				problems = append(problems, fmt.Sprintf("%d: prop %s=%q want %q", idx, k, m.GetProperty(k), want.GetProperty(k)))
			}
		}
		if id, ok := msgIDs[idx]; ok && id != u {
			problems = append(problems, fmt.Sprintf("%d: UNIQ_KEY %s != SendResult.MsgID %s", idx, u, id))
		}
		if m.BornTimestamp < tSend0.UnixMilli()-1000 || m.BornTimestamp > tSend1.UnixMilli()+1000 {
			problems = append(problems, fmt.Sprintf("%d: bornTimestamp %d outside send window", idx, m.BornTimestamp))
		}
		if m.StoreTimestamp < m.BornTimestamp-2000 {
			problems = append(problems, fmt.Sprintf("%d: storeTimestamp %d < born %d", idx, m.StoreTimestamp, m.BornTimestamp))
		}
		if m.ReconsumeTimes != 0 {
			problems = append(problems, fmt.Sprintf("%d: reconsumeTimes %d", idx, m.ReconsumeTimes))
		}
		if m.BornHost == "" || m.StoreHost != cfg.broker {
			problems = append(problems, fmt.Sprintf("%d: bornHost %q storeHost %q (want %s)", idx, m.BornHost, m.StoreHost, cfg.broker))
		}
		if m.OffsetMsgId == "" {
			problems = append(problems, fmt.Sprintf("%d: empty offsetMsgId", idx))
		}
	}
	dups := len(col.all) - len(col.first)
	col.mu.Unlock()
	for i := 0; i < n; i++ {
		if !seen[i] {
			problems = append(problems, fmt.Sprintf("%d missing", i))
		}
	}
	if err := checkDenseOffsets(col, topic, tagC); err != nil { // the filtered TagC message holds one offset
		problems = append(problems, err.Error())
	}
	detail := fmt.Sprintf("30 msgs (10 sync/10 async/10 oneway, 1B..200KB) consumed in %d ms, dups=%d, send %d ms", consumeMs, dups, tSend1.Sub(tSend0).Milliseconds())
	if len(problems) > 0 {
		return detail, fmt.Errorf("%d problems: %s", len(problems), trunc(strings.Join(problems, "; "), 900))
	}
	return detail, nil
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// ---------------------------------------------------------------------------------------------------------------
func g02(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 4); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	const batches, per = 2, 32
	type sent struct {
		queue int
		body  []byte
	}
	want := map[string]sent{} // by idx
	for b := 0; b < batches; b++ {
		var ms []*primitive.Message
		for j := 0; j < per; j++ {
			i := b*per + j
			m := primitive.NewMessage(topic, body(i, 64+i))
			m.WithTag("B")
			m.WithKeys([]string{fmt.Sprintf("bk%d", i)})
			m.WithProperty("idx", strconv.Itoa(i))
			ms = append(ms, m)
		}
		r, err := p.SendSync(ctx, ms...)
		if err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("batch %d: %v %v", b, err, r)
		}
		for j := 0; j < per; j++ {
			i := b*per + j
			want[strconv.Itoa(i)] = sent{r.MessageQueue.QueueId, ms[j].Body}
		}
	}
	col := newCollector()
	c, err := newPushConsumer(cg, name(id, "c1"))
	if err != nil {
		return "", err
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler("c1", nil)); err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	defer c.Shutdown()
	if err := col.waitUnique(ctx, batches*per, 30*time.Second); err != nil {
		return "", err
	}
	var problems []string
	col.mu.Lock()
	perQueueOffsets := map[int][]int64{}
	for _, d := range col.first {
		m := d.msg
		w, ok := want[m.GetProperty("idx")]
		if !ok {
			problems = append(problems, "unexpected idx "+m.GetProperty("idx"))
			continue
		}
		if !bytes.Equal(w.body, m.Body) {
			problems = append(problems, "body differs idx "+m.GetProperty("idx"))
		}
		if m.Queue.QueueId != w.queue {
			problems = append(problems, fmt.Sprintf("idx %s in queue %d, batch went to %d", m.GetProperty("idx"), m.Queue.QueueId, w.queue))
		}
		if m.GetTags() != "B" || m.GetKeys() != "bk"+m.GetProperty("idx") {
			problems = append(problems, fmt.Sprintf("idx %s tags %q keys %q", m.GetProperty("idx"), m.GetTags(), m.GetKeys()))
		}
		perQueueOffsets[m.Queue.QueueId] = append(perQueueOffsets[m.Queue.QueueId], m.QueueOffset)
	}
	uniq := len(col.first)
	col.mu.Unlock()
	if uniq != batches*per {
		problems = append(problems, fmt.Sprintf("%d unique UNIQ_KEYs, want %d", uniq, batches*per))
	}
	if err := checkDenseOffsets(col, topic); err != nil {
		problems = append(problems, err.Error())
	}
	detail := fmt.Sprintf("%d batches x %d, queues used %d", batches, per, len(perQueueOffsets))
	if len(problems) > 0 {
		return detail, fmt.Errorf("%s", trunc(strings.Join(problems, "; "), 900))
	}
	return detail, nil
}

// ---------------------------------------------------------------------------------------------------------------
func g03(ctx context.Context, id string) (string, error) {
	const queues = 8
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, queues); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	col := newCollector()
	cs := map[string]rocketmq.PushConsumer{}
	for _, inst := range []string{"c1", "c2"} {
		c, err := newPushConsumer(cg, name(id, inst))
		if err != nil {
			return "", err
		}
		if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler(inst, nil)); err != nil {
			return "", err
		}
		if err := c.Start(); err != nil {
			return "", err
		}
		cs[inst] = c
	}
	c2stopped := false
	defer func() {
		cs["c1"].Shutdown()
		if !c2stopped {
			cs["c2"].Shutdown()
		}
	}()
	// 1. wait for a stable 4/4 disjoint split
	t0 := time.Now()
	split := func() (map[int]bool, map[int]bool, bool) {
		a, ok1 := ownedQueues(cs["c1"], topic)
		b, ok2 := ownedQueues(cs["c2"], topic)
		if !ok1 || !ok2 {
			return a, b, false
		}
		if len(a) != queues/2 || len(b) != queues/2 {
			return a, b, false
		}
		for q := range a {
			if b[q] {
				return a, b, false
			}
		}
		return a, b, true
	}
	var a, b map[int]bool
	ok := col.waitFor(ctx, 45*time.Second, func() bool { var ok bool; a, b, ok = split(); return ok })
	if !ok {
		return "", fmt.Errorf("no 4/4 split within 45 s: c1=%s c2=%s", fmtSet(a), fmtSet(b))
	}
	splitMs := time.Since(t0).Milliseconds()
	// 2. send N, all consumed, each instance only from its own queues
	const n1 = 80
	for i := 0; i < n1; i++ {
		m := primitive.NewMessage(topic, body(i, 32))
		m.WithProperty("idx", strconv.Itoa(i))
		if r, err := p.SendSync(ctx, m); err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %d: %v", i, err)
		}
	}
	if err := col.waitUnique(ctx, n1, 30*time.Second); err != nil {
		return "", fmt.Errorf("phase 1: %v", err)
	}
	col.mu.Lock()
	q1, q2 := col.queues["c1"], col.queues["c2"]
	n1c1, n1c2 := len(col.byInst["c1"]), len(col.byInst["c2"])
	var overlap []int
	for q := range q1 {
		if q2[q] {
			overlap = append(overlap, q)
		}
	}
	col.mu.Unlock()
	if len(overlap) > 0 || n1c1 == 0 || n1c2 == 0 {
		return "", fmt.Errorf("phase 1: queues c1=%s (%d msgs) c2=%s (%d msgs) overlap=%v", fmtSet(q1), n1c1, fmtSet(q2), n1c2, overlap)
	}
	// 3. stop c2; survivor must own all 8 and consume everything sent afterwards within 25 s
	tStop := time.Now()
	_ = cs["c2"].Shutdown()
	c2stopped = true
	const n2 = 40
	for i := n1; i < n1+n2; i++ {
		m := primitive.NewMessage(topic, body(i, 32))
		m.WithProperty("idx", strconv.Itoa(i))
		if r, err := p.SendSync(ctx, m); err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %d: %v", i, err)
		}
	}
	var owned map[int]bool
	okAll := col.waitFor(ctx, 25*time.Second, func() bool {
		var ok bool
		owned, ok = ownedQueues(cs["c1"], topic)
		return ok && len(owned) == queues && col.uniqueCount() >= n1+n2
	})
	rebalMs := time.Since(tStop).Milliseconds()
	if !okAll {
		return "", fmt.Errorf("after stopping c2: c1 owns %s, unique consumed %d/%d after %d ms", fmtSet(owned), col.uniqueCount(), n1+n2, rebalMs)
	}
	return fmt.Sprintf("split 4/4 after %d ms (c1=%s c2=%s, %d/%d msgs); c1 owned all 8 and consumed all %d within %d ms of c2 stop",
		splitMs, fmtSet(a), fmtSet(b), n1c1, n1c2, n1+n2, rebalMs), nil
}

// ---------------------------------------------------------------------------------------------------------------
func g04(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 4); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	const n = 40
	for i := 0; i < n; i++ {
		m := primitive.NewMessage(topic, body(i, 48))
		m.WithTag("X")
		if r, err := p.SendSync(ctx, m); err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %d: %v", i, err)
		}
	}
	col := newCollector()
	var cs []rocketmq.PushConsumer
	defer func() {
		for _, c := range cs {
			c.Shutdown()
		}
	}()
	for _, inst := range []string{"c1", "c2"} {
		c, err := newPushConsumer(cg, name(id, inst), consumer.WithConsumerModel(consumer.BroadCasting))
		if err != nil {
			return "", err
		}
		if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler(inst, nil)); err != nil {
			return "", err
		}
		if err := c.Start(); err != nil {
			return "", err
		}
		cs = append(cs, c)
	}
	ok := col.waitFor(ctx, 40*time.Second, func() bool { return col.instCount("c1") >= n && col.instCount("c2") >= n })
	if !ok {
		return "", fmt.Errorf("broadcast: c1 got %d/%d, c2 got %d/%d", col.instCount("c1"), n, col.instCount("c2"), n)
	}
	return fmt.Sprintf("both instances received all %d", n), nil
}

// ---------------------------------------------------------------------------------------------------------------
func g09(ctx context.Context, id string) (string, error) {
	topic := name(id, "")
	a, err := getAdmin()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	if err := createTopic(ctx, topic, 6); err != nil {
		return "", err
	}
	createMs := time.Since(t0).Milliseconds()
	tl, err := a.FetchAllTopicList(ctx)
	nTopics := 0
	if tl != nil {
		nTopics = len(tl.TopicList)
	}
	if err != nil {
		return "", fmt.Errorf("FetchAllTopicList: %v", err)
	}
	if !contains(tl.TopicList, topic) {
		return "", fmt.Errorf("FetchAllTopicList (%d topics) lacks %s", len(tl.TopicList), topic)
	}
	sg, err := a.GetAllSubscriptionGroup(ctx, cfg.broker, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("GetAllSubscriptionGroup: %v", err)
	}
	nGroups := len(sg.SubscriptionGroupTable)
	if nGroups == 0 {
		return "", fmt.Errorf("GetAllSubscriptionGroup returned no groups")
	}
	if err := a.DeleteTopic(ctx, admin.WithTopicDelete(topic), admin.WithBrokerAddrDelete(cfg.broker),
		admin.WithNameSrvAddr([]string{cfg.ns})); err != nil {
		return "", fmt.Errorf("DeleteTopic: %v", err)
	}
	var still bool
	end := time.Now().Add(10 * time.Second)
	for {
		tl, err = a.FetchAllTopicList(ctx)
		if err != nil {
			return "", fmt.Errorf("FetchAllTopicList after delete: %v", err)
		}
		still = contains(tl.TopicList, topic)
		if !still || time.Now().After(end) || ctx.Err() != nil {
			break
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
	if still {
		return "", fmt.Errorf("%s still listed 10 s after DeleteTopic", topic)
	}
	return fmt.Sprintf("create+route %d ms, %d topics listed, %d subscription groups, delete ok", createMs, nTopics, nGroups), nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
