//go:build gvpoll

package main

// Pull consumer of v2.1.2+: rocketmq.NewPullConsumer / consumer.NewPullConsumer with Subscribe (required before
// Start), PullFrom, and the lite-pull style Poll/ACK with rebalancing.

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const noPullConsumer = ""

type pullConsumer interface {
	PullFrom(ctx context.Context, queue *primitive.MessageQueue, offset int64, numbers int) (*primitive.PullResult, error)
	Shutdown() error
}

func newPullConsumer(group, instance, topic string) (pullConsumer, error) {
	pc, err := consumer.NewPullConsumer(consumer.WithNameServer(nsAddr()), consumer.WithGroupName(group),
		consumer.WithInstance(instance))
	if err != nil {
		return nil, err
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}); err != nil {
		return nil, err
	}
	if err := pc.Start(); err != nil {
		return nil, err
	}
	return pc, nil
}

// runPoll: Subscribe "*" from the first offset, Poll + ACK(ConsumeSuccess) until every message was seen.
func runPoll(ctx context.Context, topic string, bySent map[string]*sentMsg) result {
	t0 := time.Now()
	pc, err := consumer.NewPullConsumer(consumer.WithNameServer(nsAddr()), consumer.WithGroupName(name("S", "pollg")),
		consumer.WithInstance(name("S", "po")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return fail(t0, "pull consumer: %v", err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}); err != nil {
		return fail(t0, "Subscribe: %v", err)
	}
	tStart := time.Now()
	if err := pc.Start(); err != nil {
		return fail(t0, "Start: %v", err)
	}
	defer pc.Shutdown()
	col := newCollector()
	polls, acks := 0, 0
	end := time.Now().Add(40 * time.Second)
	for ctx.Err() == nil && time.Now().Before(end) && col.unique() < len(bySent) {
		cr, err := pc.Poll(ctx, time.Second)
		polls++
		if err != nil {
			if consumer.IsNoNewMsgError(err) {
				continue
			}
			return fail(t0, "Poll: %v", err)
		}
		col.add(cr.GetMsgList()...)
		pc.ACK(ctx, cr, consumer.ConsumeSuccess)
		acks++
	}
	allMs := time.Since(tStart).Milliseconds()
	var probs []string
	col.mu.Lock()
	firstMs := int64(-1)
	if col.total > 0 {
		firstMs = col.firstAt.Sub(tStart).Milliseconds()
	}
	for _, mid := range col.order {
		ds := col.byMid[mid]
		s, ok := bySent[mid]
		if !ok {
			probs = append(probs, "unexpected message "+mid)
			continue
		}
		if len(ds) > 1 {
			probs = append(probs, fmt.Sprintf("%s polled %d times", mid, len(ds)))
		}
		probs = append(probs, checkFields(ds[0].msg, s, topic)...)
	}
	got, total := len(col.byMid), col.total
	col.mu.Unlock()
	detail := fmt.Sprintf("first=%dms all=%dms: %d/%d messages (TagC included), %d deliveries, %d polls, %d ACKs",
		firstMs, allMs, got, len(bySent), total, polls, acks)
	if got < len(bySent) {
		probs = append([]string{fmt.Sprintf("only %d/%d messages polled within 40 s", got, len(bySent))}, probs...)
	}
	if len(probs) > 0 {
		return fail(t0, "%s | %s", joinProblems(probs), detail)
	}
	return pass(t0, "%s", detail)
}
