// compat-lite-go: scenario LITE-G01 of the compat suite "lite" (compat-tests/suites/lite.sh) with the Go gRPC
// client github.com/apache/rocketmq-clients/golang/v5 v5.1.4 through the real rocketmq-proxy 5.5.0: a
// LitePushConsumer subscribes two lite topics of a LITE parent (created with its bound group by LiteMain before
// this runs: LITEG01_<runId>_p / _g) and a Go producer sends 10 messages to each with Message.SetLiteTopic plus
// 5 to a third, unsubscribed lite topic. Pass: the 20 delivered once each, in send order per lite topic,
// GetLiteTopic() set, none of the third. Prints one JSON line {"id","client","status","ms","detail"}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

var (
	endpoint = flag.String("endpoint", "127.0.0.1:8181", "proxy gRPC endpoint")
	runID    = flag.String("run-id", "r", "run id")
)

// result is one JSON line; the field order matters (the suite reads lines starting with {"id")
type result struct {
	ID     string `json:"id"`
	Client string `json:"client"`
	Status string `json:"status"`
	Ms     int64  `json:"ms"`
	Detail string `json:"detail"`
}

func emit(status string, ms int64, detail string) {
	b, _ := json.Marshal(result{"LITE-G01", "go-grpc-v5.1.4", status, ms, detail})
	fmt.Println(string(b))
}

type got struct{ lite, body string }

func run() (string, error) {
	topic := "LITEG01_" + *runID + "_p"
	group := "LITEG01_" + *runID + "_g"
	var mu sync.Mutex
	var recv []got
	c, err := rmq.NewLitePushConsumer(&rmq.Config{Endpoint: *endpoint, ConsumerGroup: group, Credentials: &credentials.SessionCredentials{}},
		rmq.NewLitePushConsumerConfig(topic, 30*time.Second),
		rmq.WithPushAwaitDuration(5*time.Second),
		rmq.WithPushConsumptionThreadCount(4),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			mu.Lock()
			recv = append(recv, got{mv.GetLiteTopic(), string(mv.GetBody())})
			mu.Unlock()
			return rmq.SUCCESS
		}}))
	if err != nil {
		return "", fmt.Errorf("NewLitePushConsumer: %w", err)
	}
	if err := c.Start(); err != nil {
		return "", fmt.Errorf("consumer start: %w", err)
	}
	defer c.GracefulStop()
	for _, l := range []string{"g1", "g2"} {
		if err := c.SubscribeLite(l); err != nil {
			return "", fmt.Errorf("SubscribeLite %s: %w", l, err)
		}
	}
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: *endpoint, Credentials: &credentials.SessionCredentials{}}, rmq.WithTopics(topic))
	if err != nil {
		return "", fmt.Errorf("NewProducer: %w", err)
	}
	if err := p.Start(); err != nil {
		return "", fmt.Errorf("producer start: %w", err)
	}
	defer p.GracefulStop()
	time.Sleep(time.Second)
	send := func(l string, i int) error {
		m := &rmq.Message{Topic: topic, Body: []byte(fmt.Sprintf("%s-%d", l, i))}
		m.SetLiteTopic(l)
		_, err := p.Send(context.TODO(), m)
		return err
	}
	for i := 0; i < 10; i++ {
		for _, l := range []string{"g1", "g2"} {
			if err := send(l, i); err != nil {
				return "", fmt.Errorf("send %s-%d: %w", l, i, err)
			}
		}
		if i < 5 {
			if err := send("g3", i); err != nil {
				return "", fmt.Errorf("send g3-%d: %w", i, err)
			}
		}
	}
	t0 := time.Now()
	for time.Since(t0) < 30*time.Second {
		mu.Lock()
		n := len(recv)
		mu.Unlock()
		if n >= 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := time.Since(t0)
	time.Sleep(3 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	per := map[string][]string{}
	for _, g := range recv {
		per[g.lite] = append(per[g.lite], g.body)
	}
	if len(per["g3"]) > 0 {
		return "", fmt.Errorf("unsubscribed g3 delivered: %v", per["g3"])
	}
	for _, l := range []string{"g1", "g2"} {
		want := []string{}
		for i := 0; i < 10; i++ {
			want = append(want, fmt.Sprintf("%s-%d", l, i))
		}
		if !reflect.DeepEqual(per[l], want) {
			return "", fmt.Errorf("lite %s got %v (all: %d deliveries)", l, per[l], len(recv))
		}
	}
	if len(recv) != 20 {
		return "", fmt.Errorf("%d deliveries, want 20", len(recv))
	}
	return fmt.Sprintf("20 delivered once each in send order per lite topic (g1, g2) in %d ms, g3 (not subscribed) none", all.Milliseconds()), nil
}

func main() {
	flag.Parse()
	os.Setenv("mq.consoleAppender.enabled", "false")
	rmq.ResetLogger()
	rmq.EnableSsl = false
	t0 := time.Now()
	d, err := run()
	if err != nil {
		emit("FAIL", time.Since(t0).Milliseconds(), err.Error())
		return
	}
	emit("PASS", time.Since(t0).Milliseconds(), d)
}
