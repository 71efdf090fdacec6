package main

// Issue-7 scenarios: G05 orderly, G06 retry + DLQ, G07 delay level, G08 transactions with check-back.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

func init() {
	register("G05", "orderly: sharding-key queue selector + WithConsumerOrder(true); per-order sequence preserved", 75*time.Second, g05)
	register("G06", "retry + DLQ: ConsumeRetryLater => reconsumeTimes 0,1,2; WithMaxReconsumeTimes(2) => %DLQ%group readable", 120*time.Second, g06)
	register("G07", "delay level 3 (3 s in the suite's broker.conf): delivered 2.5..8 s after send, original topic", 60*time.Second, g07)
	register("G08", "transactions: COMMIT visible, ROLLBACK never, UNKNOWN => check-back => COMMIT visible / ROLLBACK not", 120*time.Second, g08)
}

// waitOwned waits until the consumer owns `queues` queues of topic (so sends are not racing the first rebalance).
func waitOwned(ctx context.Context, c rocketmq.PushConsumer, topic string, queues int, max time.Duration) {
	end := time.Now().Add(max)
	for time.Now().Before(end) && ctx.Err() == nil {
		if q, ok := ownedQueues(c, topic); !ok || len(q) >= queues {
			return
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// ---------------------------------------------------------------------------------------------------------------
func g05(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 4); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"), producer.WithQueueSelector(producer.NewHashQueueSelector()))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	const orders, per = 6, 15
	var mu sync.Mutex
	seq := map[string][]int{}
	qOf := map[string]map[int]bool{}
	col := newCollector()
	c, err := newPushConsumer(cg, name(id, "c1"), consumer.WithConsumerOrder(true))
	if err != nil {
		return "", err
	}
	err = c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			for _, m := range msgs {
				o := m.GetProperty("order")
				s, _ := strconv.Atoi(m.GetProperty("seq"))
				seq[o] = append(seq[o], s)
				if qOf[o] == nil {
					qOf[o] = map[int]bool{}
				}
				qOf[o][m.Queue.QueueId] = true
			}
			mu.Unlock()
			col.add("c1", msgs...)
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	defer c.Shutdown()
	waitOwned(ctx, c, topic, 4, 10*time.Second)
	sentQ := map[string]int{}
	// interleave orders so per-queue ordering actually matters
	for s := 0; s < per; s++ {
		for o := 0; o < orders; o++ {
			key := fmt.Sprintf("order%d", o)
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", key, s)))
			m.WithShardingKey(key)
			m.WithProperty("order", key)
			m.WithProperty("seq", strconv.Itoa(s))
			r, err := p.SendSync(ctx, m)
			if err != nil || r.Status != primitive.SendOK {
				return "", fmt.Errorf("send %s/%d: %v", key, s, err)
			}
			if q, ok := sentQ[key]; ok && q != r.MessageQueue.QueueId {
				return "", fmt.Errorf("%s: sharding selector used queues %d and %d", key, q, r.MessageQueue.QueueId)
			}
			sentQ[key] = r.MessageQueue.QueueId
		}
	}
	if err := col.waitUnique(ctx, orders*per, 40*time.Second); err != nil {
		return "", err
	}
	mu.Lock()
	defer mu.Unlock()
	var problems []string
	for o, l := range seq {
		for i := 1; i < len(l); i++ {
			if l[i] < l[i-1] {
				problems = append(problems, fmt.Sprintf("%s out of order: %v", o, l))
				break
			}
		}
		if len(qOf[o]) != 1 {
			problems = append(problems, fmt.Sprintf("%s delivered from queues %s", o, fmtSet(qOf[o])))
		}
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%s", trunc(strings.Join(problems, "; "), 900))
	}
	return fmt.Sprintf("%d orders x %d msgs in order, %d deliveries", orders, per, len(col.all)), nil
}

// ---------------------------------------------------------------------------------------------------------------
func g06(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 2); err != nil {
		return "", err
	}
	// Pre-create the retry topic (1 queue, as the broker would): otherwise the Go consumer only discovers its route at
	// the next 30 s route refresh, which makes the scenario slow and timing-dependent.
	if err := createTopic(ctx, "%RETRY%"+cg, 1); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	var mu sync.Mutex
	times := map[string][]int32{} // kind -> reconsumeTimes per delivery
	col := newCollector()
	c, err := newPushConsumer(cg, name(id, "c1"), consumer.WithMaxReconsumeTimes(2))
	if err != nil {
		return "", err
	}
	err = c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			col.add("c1", msgs...)
			res := consumer.ConsumeSuccess
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				k := m.GetProperty("kind")
				times[k] = append(times[k], m.ReconsumeTimes)
				if k == "dlq" || (k == "retry" && m.ReconsumeTimes < 2) {
					res = consumer.ConsumeRetryLater
				}
			}
			return res, nil
		})
	if err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	defer c.Shutdown()
	waitOwned(ctx, c, topic, 2, 10*time.Second)
	sent := map[string]*primitive.SendResult{}
	bodies := map[string]string{}
	for _, k := range []string{"retry", "dlq"} {
		m := primitive.NewMessage(topic, []byte(k+"-body-"+cfg.runID))
		m.WithTag("T" + k)
		m.WithKeys([]string{k + "_" + cfg.runID})
		m.WithProperty("kind", k)
		r, err := p.SendSync(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %s: %v", k, err)
		}
		sent[k] = r
		bodies[k] = string(m.Body)
	}
	t0 := time.Now()
	want := "[0 1 2]"
	ok := col.waitFor(ctx, 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(times["retry"]) == want && len(times["dlq"]) >= 3
	})
	mu.Lock()
	got := fmt.Sprintf("retry=%v dlq=%v", times["retry"], times["dlq"])
	mu.Unlock()
	if !ok {
		return "", fmt.Errorf("after %d ms: reconsumeTimes %s, want retry=%s dlq=[0 1 2]", time.Since(t0).Milliseconds(), got, want)
	}
	retryMs := time.Since(t0).Milliseconds()
	// every redelivery must carry the original UNIQ_KEY and body
	col.mu.Lock()
	for _, d := range col.all {
		k := d.msg.GetProperty("kind")
		if uniqKey(d.msg) != sent[k].MsgID || string(d.msg.Body) != bodies[k] || d.msg.Topic != topic {
			col.mu.Unlock()
			return "", fmt.Errorf("%s redelivery (reconsume %d): uniq %s/%s topic %s body %q", k, d.msg.ReconsumeTimes, uniqKey(d.msg), sent[k].MsgID, d.msg.Topic, d.msg.Body)
		}
	}
	col.mu.Unlock()
	// DLQ: route must appear, and the message must be readable there
	dlq := "%DLQ%" + cg
	if err := waitRoute(ctx, dlq, 1, 20*time.Second); err != nil {
		return "", fmt.Errorf("DLQ: %v (%s)", err, got)
	}
	dcol := newCollector()
	dc, err := newPushConsumer(name(id, "dlqreader"), name(id, "d1"))
	if err != nil {
		return "", err
	}
	if err := dc.Subscribe(dlq, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, dcol.handler("d", nil)); err != nil {
		return "", err
	}
	if err := dc.Start(); err != nil {
		return "", err
	}
	defer dc.Shutdown()
	if err := dcol.waitUnique(ctx, 1, 30*time.Second); err != nil {
		return "", fmt.Errorf("reading %s: %v", dlq, err)
	}
	dcol.mu.Lock()
	var dm *primitive.MessageExt
	for _, d := range dcol.first {
		dm = d.msg
	}
	dcol.mu.Unlock()
	if uniqKey(dm) != sent["dlq"].MsgID || string(dm.Body) != bodies["dlq"] || dm.GetProperty("kind") != "dlq" {
		return "", fmt.Errorf("DLQ message mismatch: uniq %s want %s, body %q, kind %q", uniqKey(dm), sent["dlq"].MsgID, dm.Body, dm.GetProperty("kind"))
	}
	if rt := dm.GetProperty("RETRY_TOPIC"); rt != "" && rt != topic {
		return "", fmt.Errorf("DLQ message RETRY_TOPIC %q want %q", rt, topic)
	}
	mu.Lock()
	dlqN := len(times["dlq"])
	mu.Unlock()
	if dlqN != 3 {
		return "", fmt.Errorf("dlq message delivered %d times to the group, want 3 (%s)", dlqN, got)
	}
	return fmt.Sprintf("%s in %d ms; DLQ %s holds the message (reconsumeTimes %d)", got, retryMs, dlq, dm.ReconsumeTimes), nil
}

// ---------------------------------------------------------------------------------------------------------------
func g07(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 2); err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
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
	waitOwned(ctx, c, topic, 2, 10*time.Second)
	m := primitive.NewMessage(topic, []byte("delayed-"+cfg.runID))
	m.WithTag("D")
	m.WithProperty("kind", "delayed")
	m.WithDelayTimeLevel(3)
	tSend := time.Now()
	r, err := p.SendSync(ctx, m)
	if err != nil || r.Status != primitive.SendOK {
		return "", fmt.Errorf("send delayed: %v %v", err, r)
	}
	m2 := primitive.NewMessage(topic, []byte("now-"+cfg.runID))
	m2.WithProperty("kind", "now")
	r2, err := p.SendSync(ctx, m2)
	if err != nil || r2.Status != primitive.SendOK {
		return "", fmt.Errorf("send immediate: %v", err)
	}
	if err := col.waitUnique(ctx, 2, 20*time.Second); err != nil {
		return "", err
	}
	d, ok := col.get(r.MsgID)
	if !ok {
		return "", fmt.Errorf("delayed message (uniq %s) not among deliveries", r.MsgID)
	}
	dn, _ := col.get(r2.MsgID)
	lat := d.at.Sub(tSend)
	if lat < 2500*time.Millisecond || lat > 8*time.Second {
		return "", fmt.Errorf("delayed message delivered after %d ms, want 2500..8000", lat.Milliseconds())
	}
	if d.msg.Topic != topic || string(d.msg.Body) != "delayed-"+cfg.runID || d.msg.GetTags() != "D" {
		return "", fmt.Errorf("delayed message altered: topic %q tags %q body %q", d.msg.Topic, d.msg.GetTags(), d.msg.Body)
	}
	if !dn.at.Before(d.at) {
		return "", fmt.Errorf("immediate message arrived after the delayed one")
	}
	return fmt.Sprintf("level 3 delivered after %d ms (immediate after %d ms), DELAY=%q", lat.Milliseconds(), dn.at.Sub(tSend).Milliseconds(), d.msg.GetProperty("DELAY")), nil
}

// ---------------------------------------------------------------------------------------------------------------
type txListener struct {
	mu      sync.Mutex
	checks  map[string]int // kind -> check count
	badUniq []string
	sentIDs map[string]string // kind -> uniq (filled after send)
	execs   int32
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	atomic.AddInt32(&l.execs, 1)
	switch m.GetProperty("tx") {
	case "commit":
		return primitive.CommitMessageState
	case "rollback":
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	k := m.GetProperty("tx")
	l.mu.Lock()
	l.checks[k]++
	if want, ok := l.sentIDs[k]; ok && want != uniqKey(m) {
		l.badUniq = append(l.badUniq, fmt.Sprintf("%s: check-back uniq %s != sent %s", k, uniqKey(m), want))
	}
	l.mu.Unlock()
	switch k {
	case "unknown-commit":
		return primitive.CommitMessageState
	case "unknown-rollback":
		return primitive.RollbackMessageState
	case "commit":
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

func g08(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 2); err != nil {
		return "", err
	}
	l := &txListener{checks: map[string]int{}, sentIDs: map[string]string{}}
	tp, err := rocketmq.NewTransactionProducer(l, producer.WithNsResolver(resolver()), producer.WithGroupName(pg),
		producer.WithInstanceName(name(id, "p")), producer.WithRetry(1))
	if err != nil {
		return "", err
	}
	if err := tp.Start(); err != nil {
		return "", err
	}
	defer tp.Shutdown()
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
	kinds := []string{"commit", "rollback", "unknown-commit", "unknown-rollback"}
	t0 := time.Now()
	for _, k := range kinds {
		m := primitive.NewMessage(topic, []byte("tx-"+k+"-"+cfg.runID))
		m.WithProperty("tx", k)
		m.WithKeys([]string{k + "_" + cfg.runID})
		r, err := tp.SendMessageInTransaction(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %s: %v %v", k, err, r)
		}
		l.mu.Lock()
		l.sentIDs[k] = r.MsgID
		l.mu.Unlock()
	}
	// committed ones visible; both unknowns checked back at least once
	ok := col.waitFor(ctx, 60*time.Second, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		_, a := col.get(l.sentIDs["commit"])
		_, b := col.get(l.sentIDs["unknown-commit"])
		return a && b && l.checks["unknown-commit"] >= 1 && l.checks["unknown-rollback"] >= 1
	})
	l.mu.Lock()
	state := fmt.Sprintf("checks=%v delivered=%d", l.checks, col.uniqueCount())
	l.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("after %d ms: %s", time.Since(t0).Milliseconds(), state)
	}
	visMs := time.Since(t0).Milliseconds()
	sleepCtx(ctx, 4*time.Second) // rollback ones must never show up
	var problems []string
	l.mu.Lock()
	for _, k := range []string{"rollback", "unknown-rollback"} {
		if _, seen := col.get(l.sentIDs[k]); seen {
			problems = append(problems, k+" message was delivered")
		}
	}
	problems = append(problems, l.badUniq...)
	l.mu.Unlock()
	col.mu.Lock()
	for _, d := range col.all {
		if d.msg.Topic != topic {
			problems = append(problems, "delivered with topic "+d.msg.Topic)
		}
	}
	col.mu.Unlock()
	if len(problems) > 0 {
		return state, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return fmt.Sprintf("commit + checked-commit visible after %d ms, rollbacks absent; %s", visMs, state), nil
}
