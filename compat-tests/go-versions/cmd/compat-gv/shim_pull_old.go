//go:build !gvpoll

package main

// Releases before v2.1.2 (v2.0.0 .. v2.1.1): no usable pull consumer, hence PULL and POLL are n/a.

import (
	"context"
	"fmt"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// noPullConsumer: why PULL is n/a. rocketmq.NewPullConsumer of these releases returns an error ("pull consumer has
// not supported" in v2.0.0/v2.1.0, errors.ErrPullConsumer in v2.1.1); the unexported consumer.NewPullConsumer builds its client without a NameServer (v2.0.0: nil
// dereference in the heartbeat goroutine one second after Start).
const noPullConsumer = "no pull consumer in this release (rocketmq.NewPullConsumer returns \"pull consumer has not supported\")"

type pullConsumer interface {
	PullFrom(ctx context.Context, queue *primitive.MessageQueue, offset int64, numbers int) (*primitive.PullResult, error)
	Shutdown() error
}

func newPullConsumer(group, instance, topic string) (pullConsumer, error) {
	return nil, fmt.Errorf("%s", noPullConsumer)
}

func runPoll(ctx context.Context, topic string, bySent map[string]*sentMsg) result {
	return na("%s", noPullConsumer)
}
