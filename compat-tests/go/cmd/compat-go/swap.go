package main

// Issue 5, live swap: a Go producer and push consumer keep running while compat-tests/swap.sh swaps the broker
// underneath (Java -> rmqd -> Java). Ends when the driver creates -stop-file, then waits for every acked message.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// stopFile is set by -stop-file (scenario SWLIVE only).
var stopFile string

// progressFile is set by -progress-file (SWLIVE, optional): "<acked> <distinct consumed>", rewritten every 200 ms,
// so the driver swaps the broker once the clients have sent and consumed through the current one.
var progressFile string

func init() {
	register("SWLIVE", "live swap: producer + push consumer across broker swaps until -stop-file exists", 420*time.Second, swLive)
}

func swLive(ctx context.Context, id string) (string, error) {
	if stopFile == "" {
		return "", fmt.Errorf("SWLIVE needs -stop-file")
	}
	topic := name(id, "t")
	if err := createTopic(ctx, topic, 4); err != nil {
		return "", err
	}
	p, err := newProducer(name(id, "pg"), name(id, "p"), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		return "", err
	}
	defer func() { _ = p.Shutdown() }()
	col := newCollector()
	c, err := newPushConsumer(name(id, "cg"), name(id, "c"))
	if err != nil {
		return "", err
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler("c", nil)); err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", fmt.Errorf("consumer start: %w", err)
	}
	defer func() { _ = c.Shutdown() }()

	var mu sync.Mutex
	acked := map[string]bool{}
	failures := 0
	lastOK := time.Now()
	var outages []int64
	var lastProgress time.Time
	for i := 0; ctx.Err() == nil; i++ {
		if _, err := os.Stat(stopFile); err == nil {
			break
		}
		if progressFile != "" && time.Since(lastProgress) >= 200*time.Millisecond {
			col.mu.Lock()
			consumed := len(col.first)
			col.mu.Unlock()
			mu.Lock()
			line := fmt.Sprintf("%d %d\n", len(acked), consumed)
			mu.Unlock()
			if err := os.WriteFile(progressFile+".tmp", []byte(line), 0o644); err == nil {
				_ = os.Rename(progressFile+".tmp", progressFile)
			}
			lastProgress = time.Now()
		}
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("go live %d", i)))
		m.WithTag("live")
		r, err := p.SendSync(ctx, m)
		if err == nil && r.Status == primitive.SendOK {
			mu.Lock()
			acked[r.MsgID] = true
			mu.Unlock()
			if gap := time.Since(lastOK); gap > time.Second {
				outages = append(outages, gap.Milliseconds())
			}
			lastOK = time.Now()
		} else {
			failures++
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	if len(acked) < 100 {
		return "", fmt.Errorf("only %d sends acknowledged", len(acked))
	}
	t0 := time.Now()
	have := func() int {
		col.mu.Lock()
		defer col.mu.Unlock()
		n := 0
		for u := range acked {
			if _, ok := col.first[u]; ok {
				n++
			}
		}
		return n
	}
	col.waitFor(ctx, 90*time.Second, func() bool { return have() == len(acked) })
	if n := have(); n != len(acked) {
		return "", fmt.Errorf("%d of %d acknowledged messages never consumed", len(acked)-n, len(acked))
	}
	col.mu.Lock()
	dups := len(col.all) - len(col.first)
	col.mu.Unlock()
	return fmt.Sprintf("%d acked, all consumed (%d duplicate deliveries, %d failed sends); send outages (ms) %v; drained in %d ms",
		len(acked), dups, failures, outages, time.Since(t0).Milliseconds()), nil
}
