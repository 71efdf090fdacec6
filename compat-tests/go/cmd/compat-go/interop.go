package main

// produce / consume sub-commands for the cross-language scenarios (X02): the driver pairs their JSON lines with
// the Java runner's. Format documented in compat-tests/go/README.md.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func printJSON(v interface{}) {
	e := json.NewEncoder(os.Stdout) // one line, newline-terminated
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
}

func bodyFields(out map[string]interface{}, b []byte) {
	if utf8.Valid(b) {
		out["body"] = string(b)
	} else {
		out["bodyB64"] = base64.StdEncoding.EncodeToString(b)
	}
	out["bodyLen"] = len(b)
}

func parseProps(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		if i := strings.Index(kv, "="); i > 0 {
			m[kv[:i]] = kv[i+1:]
		}
	}
	return m
}

func commonFlags(fs *flag.FlagSet) {
	fs.StringVar(&cfg.ns, "ns", "127.0.0.1:9876", "NameServer address")
	fs.StringVar(&cfg.broker, "broker", "", "broker address; with -create the topic is created there first")
	fs.StringVar(&cfg.brokerName, "broker-name", "broker-a", "broker name")
	fs.StringVar(&cfg.runID, "run-id", fmt.Sprintf("%d", time.Now().Unix()), "run id (instance/group names)")
}

// compat-go produce -topic T -n N [-tag A] [-keys k1,k2] [-prop a=1,b=2] [-body-prefix s] [-size 0] [-group G]
func cmdProduce(args []string) int {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	commonFlags(fs)
	topic := fs.String("topic", "", "topic (required)")
	n := fs.Int("n", 10, "number of messages")
	tag := fs.String("tag", "", "tag")
	keys := fs.String("keys", "", "comma-separated keys; '{i}' is replaced by the message index")
	props := fs.String("prop", "", "comma-separated user properties k=v; '{i}' is replaced by the index")
	prefix := fs.String("body-prefix", "go-body", "body = <prefix>-<i> (padded with '.' to -size)")
	size := fs.Int("size", 0, "minimum body size in bytes")
	group := fs.String("group", "", "producer group (default PG_<topic>)")
	create := fs.Int("create", 0, "if >0 and -broker set: CreateTopic with this many queues first")
	timeout := fs.Duration("timeout", 60*time.Second, "overall timeout")
	logPath := fs.String("log", "", "Go client log file")
	_ = fs.Parse(args)
	if *topic == "" {
		fmt.Fprintln(os.Stderr, "produce: -topic is required")
		return 2
	}
	setupLog(*logPath)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	t0 := time.Now()
	fail := func(err error, sent int) int {
		printJSON(map[string]interface{}{"event": "done", "client": "go", "role": "produce", "topic": *topic,
			"sent": sent, "expected": *n, "status": "FAIL", "ms": time.Since(t0).Milliseconds(), "error": err.Error()})
		return 1
	}
	if *create > 0 && cfg.broker != "" {
		if err := createTopic(ctx, *topic, *create); err != nil {
			return fail(err, 0)
		}
	}
	if *group == "" {
		*group = "PG_" + *topic
	}
	p, err := newProducer(*group, "produce_"+cfg.runID+fmt.Sprintf("_%d", os.Getpid()))
	if err != nil {
		return fail(err, 0)
	}
	defer p.Shutdown()
	for i := 0; i < *n; i++ {
		is := fmt.Sprint(i)
		b := fmt.Sprintf("%s-%d", *prefix, i)
		if len(b) < *size {
			b += strings.Repeat(".", *size-len(b))
		}
		m := primitive.NewMessage(*topic, []byte(b))
		if *tag != "" {
			m.WithTag(*tag)
		}
		if *keys != "" {
			m.WithKeys(strings.Split(strings.ReplaceAll(*keys, "{i}", is), ","))
		}
		up := parseProps(strings.ReplaceAll(*props, "{i}", is))
		for k, v := range up {
			m.WithProperty(k, v)
		}
		before := time.Now().UnixMilli()
		r, err := p.SendSync(ctx, m)
		after := time.Now().UnixMilli()
		if err != nil || r.Status != primitive.SendOK {
			if err == nil {
				err = fmt.Errorf("send status %v", r.Status)
			}
			return fail(fmt.Errorf("message %d: %v", i, err), i)
		}
		out := map[string]interface{}{"event": "sent", "client": "go", "idx": i, "topic": *topic, "tags": *tag,
			"keys": m.GetKeys(), "props": up, "msgId": r.MsgID, "offsetMsgId": r.OffsetMsgID,
			"brokerName": r.MessageQueue.BrokerName, "queueId": r.MessageQueue.QueueId, "queueOffset": r.QueueOffset,
			"bornTimestampMin": before, "bornTimestampMax": after}
		bodyFields(out, m.Body)
		printJSON(out)
	}
	printJSON(map[string]interface{}{"event": "done", "client": "go", "role": "produce", "topic": *topic,
		"sent": *n, "expected": *n, "status": "PASS", "ms": time.Since(t0).Milliseconds()})
	return 0
}

// compat-go consume -topic T -group G -expect N [-timeout 60s] [-tag expr] [-grace 1s]
func cmdConsume(args []string) int {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	commonFlags(fs)
	topic := fs.String("topic", "", "topic (required)")
	group := fs.String("group", "", "consumer group (required)")
	expect := fs.Int("expect", 1, "number of distinct messages (by UNIQ_KEY) to wait for")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	expr := fs.String("tag", "*", "tag subscription expression")
	grace := fs.Duration("grace", time.Second, "keep consuming this long after the last expected message (to report extras)")
	broadcast := fs.Bool("broadcast", false, "BROADCASTING model")
	untilFile := fs.String("until-file", "", "instead of -expect: consume until this file exists (or -timeout), then PASS")
	reportQueues := fs.Bool("report-queues", false, "print {\"event\":\"queues\",...} whenever the owned queue set changes")
	logPath := fs.String("log", "", "Go client log file")
	_ = fs.Parse(args)
	if *topic == "" || *group == "" {
		fmt.Fprintln(os.Stderr, "consume: -topic and -group are required")
		return 2
	}
	setupLog(*logPath)
	t0 := time.Now()
	var mu sync.Mutex
	seen := map[string]bool{}
	deliveries := 0
	col := newCollector()
	var opts []consumer.Option
	if *broadcast {
		opts = append(opts, consumer.WithConsumerModel(consumer.BroadCasting))
	}
	c, err := newPushConsumer(*group, "consume_"+cfg.runID+fmt.Sprintf("_%d", os.Getpid()), opts...)
	done := func(status, errText string) int {
		mu.Lock()
		out := map[string]interface{}{"event": "done", "client": "go", "role": "consume", "topic": *topic, "group": *group,
			"received": len(seen), "deliveries": deliveries, "expected": *expect, "status": status,
			"ms": time.Since(t0).Milliseconds()}
		mu.Unlock()
		if errText != "" {
			out["error"] = errText
		}
		printJSON(out)
		if status == "PASS" {
			return 0
		}
		return 1
	}
	if err != nil {
		return done("FAIL", err.Error())
	}
	err = c.Subscribe(*topic, consumer.MessageSelector{Type: consumer.TAG, Expression: *expr},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				u := uniqKey(m)
				mu.Lock()
				deliveries++
				dup := seen[u]
				seen[u] = true
				if !dup {
					user, sys := splitProps(m.GetProperties())
					out := map[string]interface{}{"event": "recv", "client": "go", "topic": m.Topic, "msgId": u,
						"offsetMsgId": m.OffsetMsgId, "brokerName": m.Queue.BrokerName, "queueId": m.Queue.QueueId,
						"queueOffset": m.QueueOffset, "tags": m.GetTags(), "keys": m.GetKeys(), "props": user,
						"sysProps": sys, "bornTimestamp": m.BornTimestamp, "bornHost": m.BornHost,
						"storeTimestamp": m.StoreTimestamp, "storeHost": m.StoreHost, "reconsumeTimes": m.ReconsumeTimes}
					bodyFields(out, m.Body)
					printJSON(out)
				}
				mu.Unlock()
			}
			col.add("c", msgs...)
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return done("FAIL", err.Error())
	}
	if err := c.Start(); err != nil {
		return done("FAIL", err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if *reportQueues {
		go func() {
			last := ""
			for ctx.Err() == nil {
				if q, ok := ownedQueues(c, *topic); ok {
					if s := fmtSet(q); s != last {
						last = s
						mu.Lock()
						printJSON(map[string]interface{}{"event": "queues", "client": "go", "topic": *topic, "queues": sortedInts(q),
							"ms": time.Since(t0).Milliseconds()})
						mu.Unlock()
					}
				}
				sleepCtx(ctx, 100*time.Millisecond)
			}
		}()
	}
	var werr error
	if *untilFile != "" {
		for {
			if _, err := os.Stat(*untilFile); err == nil {
				break
			}
			if ctx.Err() != nil {
				werr = fmt.Errorf("until-file %s did not appear within %s", *untilFile, *timeout)
				break
			}
			sleepCtx(ctx, 100*time.Millisecond)
		}
		cancel()
		_ = c.Shutdown()
		if werr != nil {
			return done("FAIL", werr.Error())
		}
		return done("PASS", "")
	}
	werr = col.waitUnique(ctx, *expect, *timeout)
	if werr == nil {
		time.Sleep(*grace)
	}
	cancel()
	_ = c.Shutdown()
	if werr != nil {
		return done("FAIL", werr.Error())
	}
	mu.Lock()
	extra := len(seen) - *expect
	mu.Unlock()
	if extra > 0 {
		return done("FAIL", fmt.Sprintf("%d more distinct messages than expected", extra))
	}
	return done("PASS", "")
}
