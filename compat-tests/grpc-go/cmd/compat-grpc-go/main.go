// compat-grpc-go: scenarios of the compat suite "grpc" (compat-tests/suites/grpc.sh) with the Go gRPC client
// github.com/apache/rocketmq-clients/golang/v5 v5.1.4 against the real rocketmq-proxy 5.3.3 in front of the broker
// under test. Topics/groups (GRPC_<id>_<run>_t / _g, id without "GRPC-") are created by the suite with mqadmin.
// One JSON line per scenario on stdout: {"id","client","status","ms","detail"}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

const client = "grpcgo-v5.1.4"

var (
	endpoint = flag.String("endpoint", "127.0.0.1:18081", "proxy gRPC endpoint")
	runID    = flag.String("run-id", "r", "run id (names)")
	only     = flag.String("run", "", "comma list of scenario ids")
)

func topic(id string) string { return "GRPC_" + id + "_" + *runID + "_t" }
func group(id string) string { return "GRPC_" + id + "_" + *runID + "_g" }

func conf(g string) *rmq.Config {
	return &rmq.Config{Endpoint: *endpoint, ConsumerGroup: g, Credentials: &credentials.SessionCredentials{}}
}

type failure string

func (f failure) Error() string                  { return string(f) }
func fail(format string, a ...interface{}) error { return failure(fmt.Sprintf(format, a...)) }

// receiver: a SimpleConsumer receive loop started before anything is sent. Nothing waits for its first pop: the
// proxy pops with initMode MAX, and a new group starts a queue at 0 while its first message is in memory (Java
// getInitOffset with initPopOffsetByCheckMsgInMem, the default; rmqd the same), so what was sent is delivered.
type receiver struct {
	c    rmq.SimpleConsumer
	mu   sync.Mutex
	got  []*rmq.MessageView
	at   []time.Time
	errs []string
	stop chan struct{}
	done chan struct{}
}

func newReceiver(id string) (*receiver, error) {
	c, err := rmq.NewSimpleConsumer(conf(group(id)), rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic(id): rmq.SUB_ALL}))
	if err != nil {
		return nil, err
	}
	if err = c.Start(); err != nil {
		return nil, err
	}
	r := &receiver{c: c, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			select {
			case <-r.stop:
				return
			default:
			}
			mvs, err := c.Receive(context.Background(), 16, 30*time.Second)
			if err != nil {
				if !strings.Contains(err.Error(), "MESSAGE_NOT_FOUND") {
					r.mu.Lock()
					if len(r.errs) < 5 {
						r.errs = append(r.errs, err.Error())
					}
					r.mu.Unlock()
				}
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for _, mv := range mvs {
				r.mu.Lock()
				r.got = append(r.got, mv)
				r.at = append(r.at, time.Now())
				r.mu.Unlock()
				if err := c.Ack(context.Background(), mv); err != nil {
					r.mu.Lock()
					r.errs = append(r.errs, "ack: "+err.Error())
					r.mu.Unlock()
				}
			}
		}
	}()
	return r, nil
}

func (r *receiver) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }
func (r *receiver) await(n int, d time.Duration) bool {
	end := time.Now().Add(d)
	for r.count() < n && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
	}
	return r.count() >= n
}
func (r *receiver) close() {
	close(r.stop)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
	}
	r.c.GracefulStop()
}
func (r *receiver) bodies() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]int{}
	for _, v := range r.got {
		m[string(v.GetBody())]++
	}
	return m
}

func onceEach(m map[string]int, n int) bool {
	if len(m) != n {
		return false
	}
	for _, c := range m {
		if c != 1 {
			return false
		}
	}
	return true
}

func producer(opts ...rmq.ProducerOption) (rmq.Producer, error) {
	p, err := rmq.NewProducer(conf(""), opts...)
	if err != nil {
		return nil, err
	}
	return p, p.Start()
}

func send(p rmq.Producer, m *rmq.Message) error {
	_, err := p.Send(context.Background(), m)
	return err
}

// G01: normal send (tag, keys, property) + SimpleConsumer receive/ack, exactly once
func g01() (string, error) {
	id, n := "G01", 20
	r, err := newReceiver(id)
	if err != nil {
		return "", err
	}
	defer r.close()
	p, err := producer(rmq.WithTopics(topic(id)))
	if err != nil {
		return "", err
	}
	defer p.GracefulStop()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		m := &rmq.Message{Topic: topic(id), Body: []byte("g01-" + strconv.Itoa(i))}
		m.SetTag("TagG")
		m.SetKeys("gk" + strconv.Itoa(i))
		m.AddProperty("go-prop", "v"+strconv.Itoa(i))
		if err := send(p, m); err != nil {
			return "", fail("send %d: %v", i, err)
		}
	}
	if !r.await(n, 30*time.Second) {
		return "", fail("received %d/%d errors=%v", r.count(), n, r.errs)
	}
	time.Sleep(time.Second)
	if b := r.bodies(); !onceEach(b, n) {
		return "", fail("not exactly once: %v", b)
	}
	for _, v := range r.got {
		i := strings.TrimPrefix(string(v.GetBody()), "g01-")
		if v.GetTag() == nil || *v.GetTag() != "TagG" || len(v.GetKeys()) != 1 || v.GetKeys()[0] != "gk"+i ||
			v.GetProperties()["go-prop"] != "v"+i || v.GetDeliveryAttempt() != 1 {
			return "", fail("fields of g01-%s: tag %v keys %v props %v attempt %d", i, v.GetTag(), v.GetKeys(), v.GetProperties(), v.GetDeliveryAttempt())
		}
	}
	return fmt.Sprintf("%d sent and received once each (tag, keys, property, attempt 1); first=%dms", n, r.at[0].Sub(t0).Milliseconds()), nil
}

// G02: FIFO topic + orderly group: 3 message groups x 8 in order per group
func g02() (string, error) {
	id, groups, per := "G02", 3, 8
	r, err := newReceiver(id)
	if err != nil {
		return "", err
	}
	defer r.close()
	p, err := producer(rmq.WithTopics(topic(id)))
	if err != nil {
		return "", err
	}
	defer p.GracefulStop()
	t0 := time.Now()
	for i := 0; i < per; i++ {
		for g := 0; g < groups; g++ {
			m := &rmq.Message{Topic: topic(id), Body: []byte(fmt.Sprintf("mg%d-%d", g, i))}
			m.SetMessageGroup(fmt.Sprintf("mg%d", g))
			if err := send(p, m); err != nil {
				return "", fail("send: %v", err)
			}
		}
	}
	if !r.await(groups*per, 40*time.Second) {
		return "", fail("received %d/%d errors=%v", r.count(), groups*per, r.errs)
	}
	time.Sleep(time.Second)
	if b := r.bodies(); !onceEach(b, groups*per) {
		return "", fail("not exactly once: %v", b)
	}
	order := map[string][]int{}
	for _, v := range r.got {
		b := string(v.GetBody())
		if v.GetMessageGroup() == nil || *v.GetMessageGroup() != b[:3] {
			return "", fail("message group of %s: %v", b, v.GetMessageGroup())
		}
		k, _ := strconv.Atoi(b[4:])
		order[b[:3]] = append(order[b[:3]], k)
	}
	for g, s := range order {
		if !sort.IntsAreSorted(s) {
			return "", fail("group %s out of order: %v", g, s)
		}
	}
	return fmt.Sprintf("%d message groups x %d: each in send order, exactly once; first=%dms", groups, per, r.at[0].Sub(t0).Milliseconds()), nil
}

// G03: delay (delivery timestamp now+3 s): none early
func g03() (string, error) {
	id, n := "G03", 5
	r, err := newReceiver(id)
	if err != nil {
		return "", err
	}
	defer r.close()
	p, err := producer(rmq.WithTopics(topic(id)))
	if err != nil {
		return "", err
	}
	defer p.GracefulStop()
	due := map[string]time.Time{}
	for i := 0; i < n; i++ {
		ts := time.Now().Add(3*time.Second + time.Duration(i)*500*time.Millisecond)
		b := "g03-" + strconv.Itoa(i)
		due[b] = ts
		m := &rmq.Message{Topic: topic(id), Body: []byte(b)}
		m.SetDelayTimestamp(ts)
		if err := send(p, m); err != nil {
			return "", fail("send: %v", err)
		}
	}
	if !r.await(n, 30*time.Second) {
		return "", fail("received %d/%d errors=%v", r.count(), n, r.errs)
	}
	time.Sleep(500 * time.Millisecond)
	if b := r.bodies(); !onceEach(b, n) {
		return "", fail("not exactly once: %v", b)
	}
	var maxLate time.Duration
	for i, v := range r.got {
		d := due[string(v.GetBody())]
		if r.at[i].Before(d.Add(-50 * time.Millisecond)) {
			return "", fail("%s delivered %v before its time", v.GetBody(), d.Sub(r.at[i]))
		}
		if l := r.at[i].Sub(d); l > maxLate {
			maxLate = l
		}
	}
	if maxLate > 15*time.Second {
		return "", fail("delivered %v after its time", maxLate)
	}
	return fmt.Sprintf("%d delayed 3-5 s, none early, latest %d ms after its time", n, maxLate.Milliseconds()), nil
}

// G04: transaction: commit delivered, rollback not, open one committed by the check-back through the proxy
func g04() (string, error) {
	id := "G04"
	r, err := newReceiver(id)
	if err != nil {
		return "", err
	}
	defer r.close()
	var mu sync.Mutex
	checks := map[string]int{}
	p, err := producer(rmq.WithTopics(topic(id)), rmq.WithTransactionChecker(&rmq.TransactionChecker{
		Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
			mu.Lock()
			checks[string(mv.GetBody())]++
			mu.Unlock()
			if string(mv.GetBody()) == "g04-check" {
				return rmq.COMMIT
			}
			return rmq.ROLLBACK
		}}))
	if err != nil {
		return "", err
	}
	defer p.GracefulStop()
	for _, b := range []string{"g04-commit", "g04-rollback", "g04-check"} {
		if b == "g04-check" {
			// the proxy heartbeats the producer group (the topic) to the broker every 2 s (proxy config)
			time.Sleep(2500 * time.Millisecond)
		}
		tx := p.BeginTransaction()
		if _, err := p.SendWithTransaction(context.Background(), &rmq.Message{Topic: topic(id), Body: []byte(b)}, tx); err != nil {
			return "", fail("send %s: %v", b, err)
		}
		switch b {
		case "g04-commit":
			err = tx.Commit()
		case "g04-rollback":
			err = tx.RollBack()
		}
		if err != nil {
			return "", fail("end %s: %v", b, err)
		}
	}
	if !r.await(2, 40*time.Second) {
		mu.Lock()
		defer mu.Unlock()
		return "", fail("received %v checks=%v errors=%v", r.bodies(), checks, r.errs)
	}
	time.Sleep(3 * time.Second)
	b := r.bodies()
	mu.Lock()
	defer mu.Unlock()
	// each check-back answered COMMIT may commit its own copy of the half message (the broker puts the half
	// message back before each check): the checked one arrives once per check at most
	if len(b) != 2 || b["g04-commit"] != 1 || b["g04-check"] < 1 || b["g04-check"] > checks["g04-check"] {
		return "", fail("delivered %v checks %v (want commit once, check at least once and not more often than checked, no rollback)", b, checks)
	}
	return fmt.Sprintf("commit delivered, rollback not, open one checked %dx and committed (delivered %dx); checker calls %v", checks["g04-check"], b["g04-check"], checks), nil
}

// G05: PushConsumer: 30 messages consumed once each
func g05() (string, error) {
	id, n := "G05", 30
	var mu sync.Mutex
	got := map[string]int{}
	var first time.Time
	pc, err := rmq.NewPushConsumer(conf(group(id)), rmq.WithPushAwaitDuration(5*time.Second),
		rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{topic(id): rmq.SUB_ALL}),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			mu.Lock()
			if first.IsZero() {
				first = time.Now()
			}
			got[string(mv.GetBody())]++
			mu.Unlock()
			return rmq.SUCCESS
		}}))
	if err != nil {
		return "", err
	}
	if err = pc.Start(); err != nil {
		return "", err
	}
	defer pc.GracefulStop()
	p, err := producer(rmq.WithTopics(topic(id)))
	if err != nil {
		return "", err
	}
	defer p.GracefulStop()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := send(p, &rmq.Message{Topic: topic(id), Body: []byte("g05-" + strconv.Itoa(i))}); err != nil {
			return "", fail("send: %v", err)
		}
	}
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		mu.Lock()
		c := len(got)
		mu.Unlock()
		if c >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	all := time.Since(t0)
	time.Sleep(2 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if !onceEach(got, n) {
		return "", fail("consumed %d distinct of %d: %v", len(got), n, got)
	}
	return fmt.Sprintf("%d consumed once each by the push consumer, all within %d ms; first=%dms", n, all.Milliseconds(), first.Sub(t0).Milliseconds()), nil
}

func main() {
	flag.Parse()
	all := map[string]func() (string, error){"GRPC-G01": g01, "GRPC-G02": g02, "GRPC-G03": g03, "GRPC-G04": g04, "GRPC-G05": g05}
	for _, id := range strings.Split(*only, ",") {
		f, ok := all[id]
		t0 := time.Now()
		st, det := "FAIL", "unknown scenario id"
		if ok {
			ch := make(chan [2]string, 1)
			go func() {
				d, err := f()
				if err != nil {
					ch <- [2]string{"FAIL", err.Error()}
				} else {
					ch <- [2]string{"PASS", d}
				}
			}()
			select {
			case r := <-ch:
				st, det = r[0], r[1]
			case <-time.After(90 * time.Second):
				det = "timeout 90 s"
			}
		}
		b, _ := json.Marshal(struct {
			ID     string `json:"id"`
			Client string `json:"client"`
			Status string `json:"status"`
			Ms     int64  `json:"ms"`
			Detail string `json:"detail"`
		}{id, client, st, time.Since(t0).Milliseconds(), det})
		fmt.Println(string(b))
	}
	os.Exit(0)
}
