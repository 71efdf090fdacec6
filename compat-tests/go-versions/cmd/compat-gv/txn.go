package main

// Group "txn": TXN — transaction producer: COMMIT visible, ROLLBACK never, UNKNOWN => CHECK_TRANSACTION_STATE (39)
// => COMMIT visible / ROLLBACK never (the suite's broker.conf checks every 2 s).

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

type txListener struct {
	mu      sync.Mutex
	checks  map[string]int    // kind -> check-backs
	sentIDs map[string]string // kind -> SendResult.MsgID
	notes   []string
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
	return primitive.UnknowState
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	k := m.GetProperty("tx")
	l.mu.Lock()
	l.checks[k]++
	if want, ok := l.sentIDs[k]; ok && want != uniqKey(m) && len(l.notes) < 4 {
		l.notes = append(l.notes, fmt.Sprintf("%s: check-back UNIQ_KEY %s != sent %s", k, uniqKey(m), want))
	}
	l.mu.Unlock()
	switch k {
	case "unknown-commit", "commit":
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

func groupTxn(ctx context.Context, want map[string]bool) {
	t0 := time.Now()
	report(want, "TXN", runTxn(ctx, t0))
}

func runTxn(ctx context.Context, t0 time.Time) result {
	topic := name("T", "")
	if err := createTopic(ctx, topic, 2); err != nil {
		return fail(t0, "set-up: %v", err)
	}
	l := &txListener{checks: map[string]int{}, sentIDs: map[string]string{}}
	tp, err := rocketmq.NewTransactionProducer(l, producer.WithNameServer(nsAddr()), producer.WithGroupName(name("T", "pg")),
		producer.WithInstanceName(name("T", "p")), producer.WithRetry(1), producer.WithSendMsgTimeout(5*time.Second))
	if err != nil {
		return fail(t0, "transaction producer: %v", err)
	}
	if err := tp.Start(); err != nil {
		return fail(t0, "transaction producer start: %v", err)
	}
	defer tp.Shutdown()
	col := newCollector()
	c, err := newPushConsumer(name("T", "cg"), name("T", "c1"))
	if err != nil {
		return fail(t0, "push consumer: %v", err)
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler()); err != nil {
		return fail(t0, "Subscribe: %v", err)
	}
	if err := c.Start(); err != nil {
		return fail(t0, "push consumer start: %v", err)
	}
	defer c.Shutdown()
	kinds := []string{"commit", "rollback", "unknown-commit", "unknown-rollback"}
	keys := map[string]string{}
	tSend := time.Now()
	for _, k := range kinds {
		m := primitive.NewMessage(topic, []byte("tx-"+k+"-"+cfg.runID))
		m.WithProperty("tx", k)
		m.WithProperty("mid", k)
		m.WithTag("TX")
		m.WithKeys([]string{k + "_" + cfg.runID})
		keys[k] = m.GetKeys() // v2.0.0 appends a separator space
		r, err := tp.SendMessageInTransaction(ctx, m)
		if err != nil || r == nil || r.Status != primitive.SendOK {
			return fail(t0, "SendMessageInTransaction %s: %v %v", k, err, r)
		}
		l.mu.Lock()
		l.sentIDs[k] = r.MsgID
		l.mu.Unlock()
	}
	has := func(mid string) bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		return len(col.byMid[mid]) > 0
	}
	var commitMs int64 = -1
	ok := col.waitFor(ctx, 45*time.Second, func() bool {
		if commitMs < 0 && has("commit") {
			commitMs = time.Since(tSend).Milliseconds()
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return has("commit") && has("unknown-commit") && l.checks["unknown-commit"] >= 1 && l.checks["unknown-rollback"] >= 1
	})
	visMs := time.Since(tSend).Milliseconds()
	l.mu.Lock()
	state := fmt.Sprintf("execs=%d checks=%v", atomic.LoadInt32(&l.execs), l.checks)
	l.mu.Unlock()
	if !ok {
		return fail(t0, "after %d ms: commit delivered=%v unknown-commit delivered=%v, %s", visMs, has("commit"), has("unknown-commit"), state)
	}
	sleepCtx(ctx, 3*time.Second) // the rolled-back ones must never show up
	var probs []string
	for _, k := range []string{"rollback", "unknown-rollback"} {
		if has(k) {
			probs = append(probs, k+" message was delivered")
		}
	}
	l.mu.Lock()
	probs = append(probs, l.notes...)
	l.mu.Unlock()
	// A committed message may be delivered more than once: with the suite's 2 s check interval/timeout the Java broker
	// checks back half messages whose op record (written in batches) is not visible yet, and the listener answers
	// COMMIT again. Counted, not failed.
	col.mu.Lock()
	var dups []string
	for _, mid := range col.order {
		ds := col.byMid[mid]
		if len(ds) > 1 {
			dups = append(dups, fmt.Sprintf("%s x%d", mid, len(ds)))
		}
		for _, d := range ds {
			m := d.msg
			if m.Topic != topic || string(m.Body) != "tx-"+mid+"-"+cfg.runID || m.GetTags() != "TX" || m.GetKeys() != keys[mid] {
				probs = append(probs, fmt.Sprintf("%s: topic %q tags %q keys %q body %q", mid, m.Topic, m.GetTags(), m.GetKeys(), m.Body))
				break
			}
		}
	}
	col.mu.Unlock()
	if len(dups) > 0 {
		state += " deliveries " + strings.Join(dups, ",")
	}
	detail := fmt.Sprintf("commit visible after %d ms, checked-back commit after %d ms, rollbacks absent; %s", commitMs, visMs, state)
	if len(probs) > 0 {
		return fail(t0, "%s | %s", strings.Join(probs, "; "), detail)
	}
	return pass(t0, "%s", detail)
}
