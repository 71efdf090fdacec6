package main

// Raw Remoting requests (JSON header) for the set-up the scenarios need — independent of the client release under
// test (v2.0.0 has no admin package): UPDATE_AND_CREATE_TOPIC (17) to the broker and GET_ROUTEINFO_BY_TOPIC (105) to
// the NameServer. Same framing as compat-tests/go/cmd/compat-go/g10.go.

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
	"sync/atomic"
	"time"
)

type rawResp struct {
	Code      int               `json:"code"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
	Body      []byte            `json:"-"`
}

var rawOpaque int32 = 5000

func rawInvoke(addr string, code int, ext map[string]string, body []byte, timeout time.Duration) (*rawResp, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	op := atomic.AddInt32(&rawOpaque, 1)
	h, _ := json.Marshal(map[string]interface{}{"code": code, "language": "GO", "version": 317, "opaque": op,
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
		if total < 4+hl || total > 64<<20 {
			return nil, fmt.Errorf("bad frame lengths total=%d header=%d", total, hl)
		}
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
		if meta.Flag&1 == 0 || meta.Opaque != op {
			continue // not our response
		}
		resp.Body = rest[hl:]
		return &resp, nil
	}
}

// createTopic creates topic on cfg.broker (UPDATE_AND_CREATE_TOPIC 17) and waits until the NameServer route lists
// `queues` write queues on cfg.brokerName.
func createTopic(ctx context.Context, topic string, queues int) error {
	q := strconv.Itoa(queues)
	r, err := rawInvoke(cfg.broker, 17, map[string]string{"topic": topic, "defaultTopic": "TBW102",
		"readQueueNums": q, "writeQueueNums": q, "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0",
		"order": "false"}, nil, 5*time.Second)
	if err != nil {
		return fmt.Errorf("UPDATE_AND_CREATE_TOPIC %s: %v", topic, err)
	}
	if r.Code != 0 {
		return fmt.Errorf("UPDATE_AND_CREATE_TOPIC %s: code %d %s", topic, r.Code, r.Remark)
	}
	end := time.Now().Add(15 * time.Second)
	for {
		n, err := routeWriteQueues(topic)
		if err == nil && n == queues {
			return nil
		}
		if time.Now().After(end) || ctx.Err() != nil {
			return fmt.Errorf("route of %s on the NameServer: %d write queues on %s, want %d (%v)", topic, n, cfg.brokerName, queues, err)
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}
}

// routeWriteQueues: GET_ROUTEINFO_BY_TOPIC (105) -> writeQueueNums of cfg.brokerName. Only the queueDatas array is
// parsed (brokerAddrs uses non-string map keys in fastjson output, which is not standard JSON).
func routeWriteQueues(topic string) (int, error) {
	r, err := rawInvoke(cfg.ns, 105, map[string]string{"topic": topic}, nil, 5*time.Second)
	if err != nil {
		return 0, err
	}
	if r.Code != 0 {
		return 0, fmt.Errorf("GET_ROUTEINFO_BY_TOPIC code %d %s", r.Code, r.Remark)
	}
	s := string(r.Body)
	i := strings.Index(s, `"queueDatas":[`)
	if i < 0 {
		return 0, fmt.Errorf("no queueDatas in route body")
	}
	s = s[i+len(`"queueDatas":`):]
	depth, end := 0, -1
	for j, ch := range s {
		if ch == '[' {
			depth++
		} else if ch == ']' {
			depth--
			if depth == 0 {
				end = j + 1
				break
			}
		}
	}
	if end < 0 {
		return 0, fmt.Errorf("unterminated queueDatas")
	}
	var qd []struct {
		BrokerName     string `json:"brokerName"`
		WriteQueueNums int    `json:"writeQueueNums"`
	}
	if err := json.Unmarshal([]byte(s[:end]), &qd); err != nil {
		return 0, fmt.Errorf("queueDatas: %v", err)
	}
	for _, d := range qd {
		if d.BrokerName == cfg.brokerName {
			return d.WriteQueueNums, nil
		}
	}
	return 0, fmt.Errorf("%s not in queueDatas", cfg.brokerName)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// queryConsumerOffset: QUERY_CONSUMER_OFFSET (14) on cfg.broker; -1 when the broker has none (QUERY_NOT_FOUND 22).
func queryConsumerOffset(group, topic string, queueID int) (int64, error) {
	r, err := rawInvoke(cfg.broker, 14, map[string]string{"consumerGroup": group, "topic": topic,
		"queueId": strconv.Itoa(queueID)}, nil, 5*time.Second)
	if err != nil {
		return 0, err
	}
	if r.Code == 22 {
		return -1, nil
	}
	if r.Code != 0 {
		return 0, fmt.Errorf("QUERY_CONSUMER_OFFSET code %d %s", r.Code, r.Remark)
	}
	return strconv.ParseInt(r.ExtFields["offset"], 10, 64)
}

// waitCommitted polls until the broker's committed offset of every queue in want equals it (max wait).
func waitCommitted(ctx context.Context, group, topic string, want map[int]int64, max time.Duration) (map[int]int64, error) {
	end := time.Now().Add(max)
	got := map[int]int64{}
	for {
		same := true
		for q, w := range want {
			o, err := queryConsumerOffset(group, topic, q)
			if err != nil {
				return got, err
			}
			got[q] = o
			if o != w {
				same = false
			}
		}
		if same || time.Now().After(end) || ctx.Err() != nil {
			return got, nil
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}
