package main

// G10: legacy client-side offset reset. The broker's useServerSideResetOffset is switched off at runtime
// (UPDATE_BROKER_CONFIG 25, restored afterwards), INVOKE_BROKER_TO_RESET_OFFSET (222) is sent, and the broker must
// push RESET_CONSUMER_CLIENT_OFFSET (220) whose body the Go client parses (fastjson-shaped offsetTable, see
// compat-testing.md §2.3 item 3) and re-consumes from the reset point.
// The admin requests are raw Remoting frames (the Go client has no public API for them).

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func init() {
	register("G10", "reset offset by time with useServerSideResetOffset=false (set at runtime via 25): broker pushes 220, Go client re-consumes", 90*time.Second, g10)
}

type rawResp struct {
	Code      int               `json:"code"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
	Body      []byte            `json:"-"`
}

var rawOpaque int32 = 1000

func rawInvoke(addr string, code int, ext map[string]string, body []byte, timeout time.Duration) (*rawResp, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	rawOpaque++
	h, _ := json.Marshal(map[string]interface{}{"code": code, "language": "GO", "version": 317, "opaque": rawOpaque,
		"flag": 0, "remark": "", "extFields": ext})
	frame := make([]byte, 8, 8+len(h)+len(body))
	binary.BigEndian.PutUint32(frame[0:4], uint32(4+len(h)+len(body)))
	binary.BigEndian.PutUint32(frame[4:8], uint32(len(h)))
	frame = append(append(frame, h...), body...)
	if _, err := c.Write(frame); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	for {
		var lb [8]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return nil, err
		}
		total := binary.BigEndian.Uint32(lb[0:4])
		hl := binary.BigEndian.Uint32(lb[4:8]) & 0xFFFFFF
		rest := make([]byte, total-4)
		if _, err := io.ReadFull(r, rest); err != nil {
			return nil, err
		}
		var resp rawResp
		var meta struct {
			Opaque int32 `json:"opaque"`
			Flag   int   `json:"flag"`
		}
		if err := json.Unmarshal(rest[:hl], &resp); err != nil {
			return nil, fmt.Errorf("response header (%d bytes, serialize type %d): %v", hl, binary.BigEndian.Uint32(lb[4:8])>>24, err)
		}
		_ = json.Unmarshal(rest[:hl], &meta)
		if meta.Flag&1 == 0 || meta.Opaque != rawOpaque {
			continue // not our response
		}
		resp.Body = rest[hl:]
		return &resp, nil
	}
}

func brokerConfigValue(key string) (string, error) {
	r, err := rawInvoke(cfg.broker, 26, map[string]string{}, nil, 5*time.Second) // GET_BROKER_CONFIG
	if err != nil {
		return "", err
	}
	if r.Code != 0 {
		return "", fmt.Errorf("GET_BROKER_CONFIG code %d %s", r.Code, r.Remark)
	}
	for _, l := range strings.Split(string(r.Body), "\n") {
		if strings.HasPrefix(l, key+"=") {
			return strings.TrimSpace(strings.TrimPrefix(l, key+"=")), nil
		}
	}
	return "", fmt.Errorf("%s not in GET_BROKER_CONFIG body", key)
}

func setBrokerConfig(key, value string) error {
	r, err := rawInvoke(cfg.broker, 25, map[string]string{}, []byte(key+"="+value+"\n"), 5*time.Second)
	if err != nil {
		return err
	}
	if r.Code != 0 {
		return fmt.Errorf("UPDATE_BROKER_CONFIG %s=%s: code %d %s", key, value, r.Code, r.Remark)
	}
	return nil
}

func g10(ctx context.Context, id string) (string, error) {
	topic, pg, cg := name(id, ""), name(id, "pg"), name(id, "cg")
	if err := createTopic(ctx, topic, 2); err != nil {
		return "", err
	}
	orig, err := brokerConfigValue("useServerSideResetOffset")
	if err != nil {
		return "", err
	}
	p, err := newProducer(pg, name(id, "p"))
	if err != nil {
		return "", err
	}
	defer p.Shutdown()
	col := newCollector()
	c, err := newPushConsumer(cg, name(id, "c1"))
	if err != nil {
		return "", err
	}
	if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}, col.handler("c1", nil)); err != nil {
		return "", err
	}
	if err := c.Start(); err != nil {
		return "", err
	}
	defer c.Shutdown()
	waitOwned(ctx, c, topic, 2, 10*time.Second)
	tReset := time.Now().Add(-2 * time.Second).UnixMilli()
	const n = 20
	for i := 0; i < n; i++ {
		m := primitive.NewMessage(topic, body(i, 40))
		m.WithProperty("idx", strconv.Itoa(i))
		if r, err := p.SendSync(ctx, m); err != nil || r.Status != primitive.SendOK {
			return "", fmt.Errorf("send %d: %v", i, err)
		}
	}
	if err := col.waitUnique(ctx, n, 20*time.Second); err != nil {
		return "", err
	}
	first := len(col.all)
	if orig != "false" {
		if err := setBrokerConfig("useServerSideResetOffset", "false"); err != nil {
			return "", err
		}
		defer func() { _ = setBrokerConfig("useServerSideResetOffset", orig) }()
	}
	r, err := rawInvoke(cfg.broker, 222, map[string]string{"topic": topic, "group": cg, "timestamp": strconv.FormatInt(tReset, 10),
		"isForce": "true", "queueId": "-1"}, nil, 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("INVOKE_BROKER_TO_RESET_OFFSET: %v", err)
	}
	if r.Code != 0 {
		return "", fmt.Errorf("INVOKE_BROKER_TO_RESET_OFFSET: code %d %s", r.Code, r.Remark)
	}
	tr := time.Now()
	// the client sleeps 10 s in ResetOffset, then the queues come back at the next rebalance (<= 20 s)
	ok := col.waitFor(ctx, 45*time.Second, func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		return len(col.all) >= first+n
	})
	col.mu.Lock()
	again := map[string]bool{}
	for _, d := range col.all[first:] {
		again[uniqKey(d.msg)] = true
	}
	total := len(col.all)
	col.mu.Unlock()
	if !ok || len(again) < n {
		return "", fmt.Errorf("after reset (broker answered %d, body %s): %d re-deliveries, %d distinct of %d within 45 s",
			r.Code, trunc(string(r.Body), 200), total-first, len(again), n)
	}
	return fmt.Sprintf("reset (useServerSideResetOffset %s->false->%s) re-delivered all %d within %d ms", orig, orig, n, time.Since(tr).Milliseconds()), nil
}
