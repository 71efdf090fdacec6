package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

type adminAPI interface {
	CreateTopic(ctx context.Context, opts ...admin.OptionCreate) error
	DeleteTopic(ctx context.Context, opts ...admin.OptionDelete) error
	FetchAllTopicList(ctx context.Context) (*admin.TopicList, error)
	FetchPublishMessageQueues(ctx context.Context, topic string) ([]*primitive.MessageQueue, error)
	GetAllSubscriptionGroup(ctx context.Context, brokerAddr string, timeoutMillis time.Duration) (*admin.SubscriptionGroupWrapper, error)
	Close() error
}

var (
	sharedAdmin   adminAPI
	sharedAdminMu sync.Mutex
)

func resolver() primitive.NsResolver { return primitive.NewPassthroughResolver([]string{cfg.ns}) }

// getAdmin returns one process-wide admin (its client is shared by ClientID ip@pid; closing it early would shut down
// a client other objects may share, so it is closed only at exit).
func getAdmin() (adminAPI, error) {
	sharedAdminMu.Lock()
	defer sharedAdminMu.Unlock()
	if sharedAdmin != nil {
		return sharedAdmin, nil
	}
	a, err := admin.NewAdmin(admin.WithResolver(resolver()))
	if err != nil {
		return nil, err
	}
	sharedAdmin = a
	return a, nil
}

func shutdownShared() {
	sharedAdminMu.Lock()
	defer sharedAdminMu.Unlock()
	if sharedAdmin != nil {
		_ = sharedAdmin.Close()
		sharedAdmin = nil
	}
}

// createTopic creates topic on cfg.broker through the Go admin (UPDATE_AND_CREATE_TOPIC 17) and, because
// CreateTopic ignores the response code, waits until the NameServer route shows `queues` write queues.
func createTopic(ctx context.Context, topic string, queues int) error {
	a, err := getAdmin()
	if err != nil {
		return err
	}
	if err := a.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(cfg.broker),
		admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues)); err != nil {
		return fmt.Errorf("CreateTopic %s: %w", topic, err)
	}
	return waitRoute(ctx, topic, queues, 15*time.Second)
}

func waitRoute(ctx context.Context, topic string, queues int, max time.Duration) error {
	a, err := getAdmin()
	if err != nil {
		return err
	}
	end := time.Now().Add(max)
	var last error
	for {
		mqs, err := a.FetchPublishMessageQueues(ctx, topic)
		if err == nil {
			n := 0
			for _, mq := range mqs {
				if mq.BrokerName == cfg.brokerName {
					n++
				}
			}
			if n == queues {
				return nil
			}
			last = fmt.Errorf("route of %s has %d queues on %s, want %d (%d total)", topic, n, cfg.brokerName, queues, len(mqs))
		} else {
			last = err
		}
		if time.Now().After(end) || ctx.Err() != nil {
			return fmt.Errorf("route for %s not visible: %v", topic, last)
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func newProducer(group, instance string, extra ...producer.Option) (rocketmq.Producer, error) {
	opts := []producer.Option{producer.WithNsResolver(resolver()), producer.WithGroupName(group),
		producer.WithInstanceName(instance), producer.WithRetry(2), producer.WithSendMsgTimeout(5 * time.Second)}
	opts = append(opts, extra...)
	p, err := rocketmq.NewProducer(opts...)
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("producer start: %w", err)
	}
	return p, nil
}

func newPushConsumer(group, instance string, extra ...consumer.Option) (rocketmq.PushConsumer, error) {
	opts := []consumer.Option{consumer.WithNsResolver(resolver()), consumer.WithGroupName(group),
		consumer.WithInstance(instance), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset)}
	opts = append(opts, extra...)
	return rocketmq.NewPushConsumer(opts...)
}

// ---------------------------------------------------------------------------------------------------------------
// collector: records every delivery, keyed by UNIQ_KEY.

type delivery struct {
	inst string
	at   time.Time
	msg  *primitive.MessageExt
}

type collector struct {
	mu          sync.Mutex
	first       map[string]delivery        // uniq -> first delivery
	all         []delivery                 // every delivery
	byInst      map[string]map[string]bool // inst -> uniq set
	queues      map[string]map[int]bool    // inst -> queue ids seen
	changed     chan struct{}
	filterTopic string
}

func newCollector() *collector {
	return &collector{first: map[string]delivery{}, byInst: map[string]map[string]bool{},
		queues: map[string]map[int]bool{}, changed: make(chan struct{}, 1)}
}

func uniqKey(m *primitive.MessageExt) string {
	if u := m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex); u != "" {
		return u
	}
	return m.MsgId
}

func (c *collector) add(inst string, msgs ...*primitive.MessageExt) {
	c.mu.Lock()
	now := time.Now()
	for _, m := range msgs {
		u := uniqKey(m)
		d := delivery{inst, now, m}
		c.all = append(c.all, d)
		if _, ok := c.first[u]; !ok {
			c.first[u] = d
		}
		if c.byInst[inst] == nil {
			c.byInst[inst] = map[string]bool{}
			c.queues[inst] = map[int]bool{}
		}
		c.byInst[inst][u] = true
		if m.Queue != nil {
			c.queues[inst][m.Queue.QueueId] = true
		}
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// handler returns a listener that records and answers with decide (nil = success).
func (c *collector) handler(inst string, decide func(*primitive.MessageExt) consumer.ConsumeResult) func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	return func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		c.add(inst, msgs...)
		if decide != nil {
			for _, m := range msgs {
				if r := decide(m); r != consumer.ConsumeSuccess {
					return r, nil
				}
			}
		}
		return consumer.ConsumeSuccess, nil
	}
}

func (c *collector) uniqueCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.first)
}

func (c *collector) instCount(inst string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byInst[inst])
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

func (c *collector) waitUnique(ctx context.Context, n int, max time.Duration) error {
	if c.waitFor(ctx, max, func() bool { return c.uniqueCount() >= n }) {
		return nil
	}
	return fmt.Errorf("received %d/%d unique messages", c.uniqueCount(), n)
}

func (c *collector) get(uniq string) (delivery, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.first[uniq]
	return d, ok
}

// ---------------------------------------------------------------------------------------------------------------

// ownedQueues reads the push consumer's current assignment through its exported GetConsumerRunningInfo
// (the concrete type is unexported, hence reflection). Returns nil, false when unavailable.
func ownedQueues(pc rocketmq.PushConsumer, topic string) (map[int]bool, bool) {
	defer func() { _ = recover() }()
	m := reflect.ValueOf(pc).MethodByName("GetConsumerRunningInfo")
	if !m.IsValid() {
		return nil, false
	}
	out := m.Call([]reflect.Value{reflect.ValueOf(false)})
	if len(out) != 1 || out[0].IsNil() {
		return nil, false
	}
	tbl := out[0].Elem().FieldByName("MQTable")
	if !tbl.IsValid() {
		return nil, false
	}
	res := map[int]bool{}
	for _, k := range tbl.MapKeys() {
		mq, ok := k.Interface().(primitive.MessageQueue)
		if ok && mq.Topic == topic {
			res[mq.QueueId] = true
		}
	}
	return res, true
}

func fmtSet(m map[int]bool) string {
	var s []string
	for _, q := range sortedInts(m) {
		s = append(s, strconv.Itoa(q))
	}
	return "[" + strings.Join(s, ",") + "]"
}

func sortedKeys(m map[string]string) []string {
	var r []string
	for k := range m {
		r = append(r, k)
	}
	sort.Strings(r)
	return r
}

// systemProps: property names set by clients/broker (Java MessageConst) — everything else is a user property.
var systemProps = map[string]bool{
	"KEYS": true, "TAGS": true, "WAIT": true, "DELAY": true, "RETRY_TOPIC": true, "REAL_TOPIC": true, "REAL_QID": true,
	"TRAN_MSG": true, "PGROUP": true, "MIN_OFFSET": true, "MAX_OFFSET": true, "BUYER_ID": true, "ORIGIN_MESSAGE_ID": true,
	"TRANSFER_FLAG": true, "CORRECTION_FLAG": true, "MQ2_FLAG": true, "RECONSUME_TIME": true, "MSG_REGION": true,
	"TRACE_ON": true, "UNIQ_KEY": true, "MAX_RECONSUME_TIMES": true, "CONSUME_START_TIME": true, "POP_CK": true,
	"POP_CK_OFFSET": true, "1ST_POP_TIME": true, "TRAN_PREPARED_QUEUE_OFFSET": true, "DUP_INFO": true,
	"EXTEND_UNIQ_INFO": true, "INSTANCE_ID": true, "CORRELATION_ID": true, "REPLY_TO_CLIENT": true, "TTL": true,
	"ARRIVE_TIME": true, "PUSH_REPLY_TIME": true, "CLUSTER": true, "MSG_TYPE": true, "__STARTDELIVERTIME": true,
	"TIMER_DELIVER_MS": true, "TIMER_DELAY_SEC": true, "TIMER_DELAY_MS": true, "TIMER_OUT_MS": true,
	"TIMER_ENQUEUE_MS": true, "TIMER_DEQUEUE_MS": true, "TIMER_ROLL_TIMES": true, "TIMER_DEL_UNIQKEY": true,
	"__SHARDINGKEY": true, "SHARDING_KEY": true, "bname": true, "TRANSACTION_CHECK_TIMES": true,
	"CHECK_IMMUNITY_TIME_IN_SECONDS": true, "INNER_NUM": true, "INNER_BASE": true, "TRACE_CONTEXT": true,
	"CONSUME_CONTEXT": true, "__RMQ.TRANSIENT.TOPIC_SYS_FLAG": true, "__RMQ.TRANSIENT.GROUP_SYS_FLAG": true,
	"TraceOn": true, "_CATCH_MSG_ID": true, "WAIT_STORE_MSG_OK": true,
}

func splitProps(all map[string]string) (user, sys map[string]string) {
	user, sys = map[string]string{}, map[string]string{}
	for k, v := range all {
		if systemProps[k] || strings.HasPrefix(k, "__RMQ.TRANSIENT.") {
			sys[k] = v
		} else {
			user[k] = v
		}
	}
	return
}
