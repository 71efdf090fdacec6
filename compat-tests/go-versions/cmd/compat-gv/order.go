package main

// Group "order": ORDER — producer with NewHashQueueSelector + WithShardingKey, orderly push consumer
// (WithConsumerOrder(true): LOCK_BATCH_MQ 41 before pulling). Every order's sequence must arrive in send order, from
// one queue, each message exactly once.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

func groupOrder(ctx context.Context, want map[string]bool) {
	t0 := time.Now()
	report(want, "ORDER", runOrder(ctx, t0))
}

func runOrder(ctx context.Context, t0 time.Time) result {
	topic := name("O", "")
	if err := createTopic(ctx, topic, 4); err != nil {
		return fail(t0, "set-up: %v", err)
	}
	p, err := newProducer(name("O", "pg"), name("O", "p"), producer.WithQueueSelector(producer.NewHashQueueSelector()))
	if err != nil {
		return fail(t0, "producer: %v", err)
	}
	defer p.Shutdown()
	const orders, per = 6, 12
	var mu sync.Mutex
	seq := map[string][]int{}
	qOf := map[string]map[int]bool{}
	col := newCollector()
	c, err := newPushConsumer(name("O", "cg"), name("O", "c1"), consumer.WithConsumerOrder(true))
	if err != nil {
		return fail(t0, "push consumer: %v", err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			for _, m := range msgs {
				o := m.GetProperty("order")
				s, _ := strconv.Atoi(m.GetProperty("seq"))
				seq[o] = append(seq[o], s)
				if qOf[o] == nil {
					qOf[o] = map[int]bool{}
				}
				if m.Queue != nil {
					qOf[o][m.Queue.QueueId] = true
				}
			}
			mu.Unlock()
			col.add(msgs...)
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return fail(t0, "Subscribe: %v", err)
	}
	tStart := time.Now()
	if err := c.Start(); err != nil {
		return fail(t0, "push consumer start: %v", err)
	}
	defer c.Shutdown()
	sentQ := map[string]int{}
	var probs []string
	// interleave the orders so that per-queue ordering matters
	for s := 0; s < per; s++ {
		for o := 0; o < orders; o++ {
			key := fmt.Sprintf("order%d", o)
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d-%s", key, s, cfg.runID)))
			m.WithShardingKey(key)
			m.WithTag("O")
			m.WithProperty("order", key)
			m.WithProperty("seq", strconv.Itoa(s))
			m.WithProperty("mid", fmt.Sprintf("%s-%d", key, s))
			r, err := p.SendSync(ctx, m)
			if err != nil || r == nil || r.Status != primitive.SendOK {
				return fail(t0, "send %s/%d: %v %v", key, s, err, r)
			}
			if q, ok := sentQ[key]; ok && q != r.MessageQueue.QueueId {
				probs = append(probs, fmt.Sprintf("%s: the hash selector used queues %d and %d", key, q, r.MessageQueue.QueueId))
			}
			sentQ[key] = r.MessageQueue.QueueId
		}
	}
	ok := col.waitFor(ctx, 40*time.Second, func() bool { return col.unique() >= orders*per })
	allMs := time.Since(tStart).Milliseconds()
	sleepCtx(ctx, time.Second) // duplicates
	mu.Lock()
	defer mu.Unlock()
	for o, l := range seq {
		for i := 1; i < len(l); i++ {
			if l[i] < l[i-1] {
				probs = append(probs, fmt.Sprintf("%s out of order: %v", o, l))
				break
			}
		}
		if len(l) != per {
			probs = append(probs, fmt.Sprintf("%s: %d deliveries, want %d: %v", o, len(l), per, l))
		}
		if len(qOf[o]) != 1 {
			probs = append(probs, fmt.Sprintf("%s delivered from %d queues", o, len(qOf[o])))
		}
	}
	col.mu.Lock()
	firstMs := int64(-1)
	if col.total > 0 {
		firstMs = col.firstAt.Sub(tStart).Milliseconds()
	}
	got, total := len(col.byMid), col.total
	col.mu.Unlock()
	queues := map[int]bool{}
	for _, q := range sentQ {
		queues[q] = true
	}
	detail := fmt.Sprintf("first=%dms all=%dms: %d orders x %d msgs over %d queues, %d/%d unique, %d deliveries",
		firstMs, allMs, orders, per, len(queues), got, orders*per, total)
	if !ok {
		probs = append([]string{fmt.Sprintf("only %d/%d messages within 40 s", got, orders*per)}, probs...)
	}
	if len(probs) > 0 {
		return fail(t0, "%s | %s", joinProblems(probs), detail)
	}
	return pass(t0, "%s", detail)
}
