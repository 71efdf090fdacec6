package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// name: unique topic/group names per release and run (GV200_S_<runid>_pg).
func name(kind, suffix string) string {
	n := idPrefix + "_" + kind + "_" + cfg.runID
	if suffix != "" {
		n += "_" + suffix
	}
	return n
}

func nsAddr() primitive.NamesrvAddr { return primitive.NamesrvAddr{cfg.ns} }

// Every release has WithNameServer (v2.0.0 has no WithNsResolver): the NameServer is always explicit.
func newProducer(group, instance string, extra ...producer.Option) (rocketmq.Producer, error) {
	opts := []producer.Option{producer.WithNameServer(nsAddr()), producer.WithGroupName(group),
		producer.WithInstanceName(instance), producer.WithRetry(2), producer.WithSendMsgTimeout(5 * time.Second)}
	p, err := rocketmq.NewProducer(append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("producer start: %w", err)
	}
	return p, nil
}

func newPushConsumer(group, instance string, extra ...consumer.Option) (rocketmq.PushConsumer, error) {
	opts := []consumer.Option{consumer.WithNameServer(nsAddr()), consumer.WithGroupName(group),
		consumer.WithInstance(instance), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset)}
	return rocketmq.NewPushConsumer(append(opts, extra...)...)
}

func body(i, size int, tag string) []byte {
	head := fmt.Sprintf("%s-body-%d-%s|", tag, i, cfg.runID)
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

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func joinProblems(p []string) string {
	if len(p) > 6 {
		return fmt.Sprintf("%d problems: %s", len(p), trunc(strings.Join(p[:6], "; "), 700)+" ...")
	}
	return fmt.Sprintf("%d problems: %s", len(p), trunc(strings.Join(p, "; "), 800))
}

func uniqKey(m *primitive.MessageExt) string {
	if u := m.GetProperty("UNIQ_KEY"); u != "" {
		return u
	}
	return m.MsgId
}

// ------------------------------------------------------------------------------------------------------------------
// collector: every delivery, keyed by our own "mid" property (v2.0.0 batches carry no per-message UNIQ_KEY).

type delivery struct {
	at  time.Time
	msg *primitive.MessageExt
}

type collector struct {
	mu      sync.Mutex
	byMid   map[string][]delivery
	order   []string // mids in first-delivery order
	total   int
	firstAt time.Time
	changed chan struct{}
}

func newCollector() *collector {
	return &collector{byMid: map[string][]delivery{}, changed: make(chan struct{}, 1)}
}

func midOf(m *primitive.MessageExt) string {
	if v := m.GetProperty("mid"); v != "" {
		return v
	}
	return "?" + uniqKey(m)
}

func (c *collector) add(msgs ...*primitive.MessageExt) {
	c.mu.Lock()
	now := time.Now()
	for _, m := range msgs {
		mid := midOf(m)
		if c.total == 0 {
			c.firstAt = now
		}
		c.total++
		if len(c.byMid[mid]) == 0 {
			c.order = append(c.order, mid)
		}
		c.byMid[mid] = append(c.byMid[mid], delivery{now, m})
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *collector) handler() func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		c.add(msgs...)
		return consumer.ConsumeSuccess, nil
	}
}

func (c *collector) unique() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byMid)
}

// waitFor polls cond until true, the context ends or max passes.
func (c *collector) waitFor(ctx context.Context, max time.Duration, cond func() bool) bool {
	end := time.Now().Add(max)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) || ctx.Err() != nil {
			return cond()
		}
		select {
		case <-ctx.Done():
		case <-c.changed:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ------------------------------------------------------------------------------------------------------------------
// sent: what a send scenario produced, to compare deliveries against.

type sentMsg struct {
	sc       string // SYNC / ASYNC / ONEWAY / BATCH
	mid      string
	msg      *primitive.Message
	res      *primitive.SendResult // nil for oneway
	t0, t1   time.Time             // send window (bornTimestamp must fall inside, ±1 s)
	filtered bool                  // TagC: a "TagA || TagB" subscription must not receive it
}

// checkFields compares one received message with what was sent.
func checkFields(m *primitive.MessageExt, s *sentMsg, topic string) []string {
	var p []string
	add := func(f string, a ...interface{}) { p = append(p, s.mid+": "+fmt.Sprintf(f, a...)) }
	if m.Topic != topic {
		add("topic %q", m.Topic)
	}
	if !bytes.Equal(m.Body, s.msg.Body) {
		add("body differs (len %d, sent %d)", len(m.Body), len(s.msg.Body))
	}
	if m.GetTags() != s.msg.GetTags() {
		add("tags %q, sent %q", m.GetTags(), s.msg.GetTags())
	}
	if m.GetKeys() != s.msg.GetKeys() {
		add("keys %q, sent %q", m.GetKeys(), s.msg.GetKeys())
	}
	for _, k := range []string{"mid", "idx", "sc", "u_p"} {
		if m.GetProperty(k) != s.msg.GetProperty(k) {
			add("property %s=%q, sent %q", k, m.GetProperty(k), s.msg.GetProperty(k))
		}
	}
	if u := s.msg.GetProperty("UNIQ_KEY"); u != "" && m.GetProperty("UNIQ_KEY") != u {
		add("UNIQ_KEY %q, sent %q", m.GetProperty("UNIQ_KEY"), u)
	}
	if s.res != nil {
		if s.sc != "BATCH" && s.res.MsgID != "" && uniqKey(m) != s.res.MsgID {
			add("UNIQ_KEY %q != SendResult.MsgID %q", uniqKey(m), s.res.MsgID)
		}
		if s.res.MessageQueue != nil && m.Queue != nil && m.Queue.QueueId != s.res.MessageQueue.QueueId {
			add("queue %d, SendResult queue %d", m.Queue.QueueId, s.res.MessageQueue.QueueId)
		}
		if s.sc != "BATCH" && m.QueueOffset != s.res.QueueOffset {
			add("queueOffset %d, SendResult %d", m.QueueOffset, s.res.QueueOffset)
		}
	}
	if m.BornTimestamp < s.t0.UnixNano()/1e6-1000 || m.BornTimestamp > s.t1.UnixNano()/1e6+1000 {
		add("bornTimestamp %d outside the send window", m.BornTimestamp)
	}
	if m.StoreTimestamp < m.BornTimestamp-2000 {
		add("storeTimestamp %d < born %d", m.StoreTimestamp, m.BornTimestamp)
	}
	if m.ReconsumeTimes != 0 {
		add("reconsumeTimes %d", m.ReconsumeTimes)
	}
	if m.BornHost == "" || m.StoreHost != cfg.broker {
		add("bornHost %q storeHost %q (want %s)", m.BornHost, m.StoreHost, cfg.broker)
	}
	if m.OffsetMsgId == "" {
		add("empty offsetMsgId")
	}
	return p
}

// denseOffsets: per queue, the offsets must be 0..n-1.
func denseOffsets(offs map[int]map[int64]bool) error {
	var qs []int
	for q := range offs {
		qs = append(qs, q)
	}
	sort.Ints(qs)
	for _, q := range qs {
		for o := int64(0); o < int64(len(offs[q])); o++ {
			if !offs[q][o] {
				return fmt.Errorf("queue %d: offsets not dense from 0 (%d msgs, missing %d)", q, len(offs[q]), o)
			}
		}
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// pullFrom: one PullFrom with its own 10 s bound (old releases ignore the context's deadline for the pull itself).
func pullFrom(ctx context.Context, pc pullConsumer, mq *primitive.MessageQueue, off int64, n int) (*primitive.PullResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	type res struct {
		r   *primitive.PullResult
		err error
	}
	ch := make(chan res, 1)
	go func() {
		r, err := pc.PullFrom(ctx, mq, off, n)
		ch <- res{r, err}
	}()
	select {
	case x := <-ch:
		if x.err == nil && x.r == nil {
			return nil, fmt.Errorf("nil PullResult")
		}
		return x.r, x.err
	case <-ctx.Done():
		return nil, fmt.Errorf("PullFrom did not return within 10 s")
	}
}
