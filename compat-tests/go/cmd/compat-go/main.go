// compat-go: RocketMQ compatibility scenarios driven by the real Go client
// (github.com/apache/rocketmq-client-go/v2, pinned in go.mod).
//
//	compat-go [-ns 127.0.0.1:9876] -broker 127.0.0.1:PORT [-broker-name broker-a] -run G01,G02 [-run-id X]
//	compat-go produce -topic T -n N [-tag A] [-keys k1,k2] [-prop k=v,...] ...
//	compat-go consume -topic T -group G -expect N [-timeout 60s] ...
//
// Scenario mode prints one JSON line per scenario on stdout:
//
//	{"id":"G01","client":"go","status":"PASS|FAIL|SKIP","ms":1234,"detail":"..."}
//
// The produce/consume sub-commands print one JSON line per message (see README.md).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

type config struct {
	ns         string
	broker     string
	brokerName string
	runID      string
	scale      float64
}

var cfg config

type scenario struct {
	id      string
	desc    string
	timeout time.Duration
	fn      func(ctx context.Context, id string) (string, error)
}

var scenarios []scenario

func register(id, desc string, timeout time.Duration, fn func(ctx context.Context, id string) (string, error)) {
	scenarios = append(scenarios, scenario{id, desc, timeout, fn})
}

// emit prints the result line; stdout carries JSON lines only.
func emit(id, status string, ms int64, detail string) {
	// field order of the Java runner: id, client, status, ms, detail
	line := fmt.Sprintf(`{"id":%s,"client":"go","status":%s,"ms":%d,"detail":%s}`, jstr(id), jstr(status), ms, jstr(detail))
	fmt.Println(line)
}

func jstr(s string) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func setupLog(path string) {
	if path == "" {
		path = filepath.Join(os.TempDir(), "compat-go-"+cfg.runID+".log")
	}
	lvl := os.Getenv("ROCKETMQ_GO_LOG_LEVEL")
	if lvl == "" {
		lvl = "warn"
	}
	rlog.SetLogLevel(lvl)
	_ = rlog.SetOutputPath(path)
}

func main() {
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		switch os.Args[1] {
		case "produce":
			os.Exit(cmdProduce(os.Args[2:]))
		case "consume":
			os.Exit(cmdConsume(os.Args[2:]))
		case "list":
			for _, s := range scenarios {
				fmt.Printf("%s\t%s\n", s.id, s.desc)
			}
			return
		default:
			fmt.Fprintf(os.Stderr, "unknown sub-command %q (produce|consume|list, or flags for scenario mode)\n", os.Args[1])
			os.Exit(2)
		}
	}
	fs := flag.NewFlagSet("compat-go", flag.ExitOnError)
	fs.StringVar(&cfg.ns, "ns", "127.0.0.1:9876", "NameServer address")
	fs.StringVar(&cfg.broker, "broker", "127.0.0.1:20911", "broker address (topics are created there)")
	fs.StringVar(&cfg.brokerName, "broker-name", "broker-a", "broker name")
	run := fs.String("run", "ci", "comma-separated scenario ids, 'ci' (G01-G09) or 'all' (adds G10)")
	fs.StringVar(&cfg.runID, "run-id", "", "suffix for unique topic/group names (default: unix seconds)")
	fs.Float64Var(&cfg.scale, "timeout-scale", 1.0, "multiply every per-scenario timeout")
	logPath := fs.String("log", "", "Go client log file (default $TMPDIR/compat-go-<runid>.log)")
	fs.StringVar(&stopFile, "stop-file", "", "SWLIVE: run until this file exists")
	fs.StringVar(&progressFile, "progress-file", "", "SWLIVE: write \"<acked> <consumed>\" to this file every 200 ms")
	isolate := fs.Bool("isolate", true, "run each scenario in its own child process (a client panic or hang cannot take the others down)")
	_ = fs.Parse(os.Args[1:])
	if cfg.runID == "" {
		cfg.runID = fmt.Sprintf("%d", time.Now().Unix())
	}
	setupLog(*logPath)

	if strings.EqualFold(*run, "ci") {
		*run = "G01,G02,G03,G04,G05,G06,G07,G08,G09"
	}
	want := map[string]bool{}
	all := strings.EqualFold(*run, "all")
	var order []string
	for _, id := range strings.Split(*run, ",") {
		id = strings.TrimSpace(strings.ToUpper(id))
		if id != "" {
			want[id] = true
			order = append(order, id)
		}
	}
	byID := map[string]scenario{}
	for _, s := range scenarios {
		byID[s.id] = s
	}
	var list []scenario
	if all {
		list = append(list, scenarios...)
		sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	} else {
		for _, id := range order {
			s, ok := byID[id]
			if !ok {
				emit(id, "SKIP", 0, "unknown scenario id")
				continue
			}
			list = append(list, s)
		}
	}
	failed := 0
	for _, s := range list {
		st := ""
		if *isolate && len(list) > 1 {
			st = runChild(s, *logPath)
		} else {
			st = runOne(s)
		}
		if st != "PASS" && st != "SKIP" {
			failed++
		}
	}
	shutdownShared()
	if failed > 0 {
		os.Exit(1)
	}
}

func runOne(s scenario) string {
	to := time.Duration(float64(s.timeout) * cfg.scale)
	ctx, cancel := context.WithTimeout(context.Background(), to)
	defer cancel()
	type res struct {
		detail string
		err    error
	}
	ch := make(chan res, 1)
	t0 := time.Now()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- res{"", fmt.Errorf("panic: %v", r)}
			}
		}()
		d, err := s.fn(ctx, s.id)
		ch <- res{d, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-time.After(to + 5*time.Second): // the scenario ignored its context: hard stop
		r = res{"", fmt.Errorf("hard timeout after %s (scenario hung)", to)}
	}
	ms := time.Since(t0).Milliseconds()
	status := "PASS"
	detail := r.detail
	if r.err != nil {
		status = "FAIL"
		if ctx.Err() != nil && !strings.Contains(r.err.Error(), "timeout") {
			detail = fmt.Sprintf("timeout %s: %v", to, r.err)
		} else {
			detail = r.err.Error()
		}
		if r.detail != "" {
			detail += " | " + r.detail
		}
	} else if strings.HasPrefix(detail, "SKIP:") {
		status = "SKIP"
		detail = strings.TrimSpace(strings.TrimPrefix(detail, "SKIP:"))
	}
	emit(s.id, status, ms, detail)
	return status
}

func name(id, suffix string) string {
	n := id + "_" + cfg.runID
	if suffix != "" {
		n += "_" + suffix
	}
	return n
}

func sortedInts(m map[int]bool) []int {
	var r []int
	for k := range m {
		r = append(r, k)
	}
	sort.Ints(r)
	return r
}

// runChild re-executes this binary for one scenario and relays its result line; a crash or hang becomes FAIL.
func runChild(s scenario, logPath string) string {
	to := time.Duration(float64(s.timeout)*cfg.scale) + 20*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), to)
	defer cancel()
	args := []string{"-ns", cfg.ns, "-broker", cfg.broker, "-broker-name", cfg.brokerName, "-run", s.id,
		"-run-id", cfg.runID, "-timeout-scale", fmt.Sprint(cfg.scale), "-isolate=false"}
	if logPath != "" {
		args = append(args, "-log", logPath)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	for _, l := range strings.Split(stdout.String(), "\n") {
		var r struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.ID == s.id && r.Status != "" {
			fmt.Println(l)
			return r.Status
		}
	}
	tail := stderr.String()
	if len(tail) > 600 {
		tail = tail[len(tail)-600:]
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %s", to)
	}
	emit(s.id, "FAIL", time.Since(t0).Milliseconds(), fmt.Sprintf("scenario process died without a result (%v): %s", err, tail))
	return "FAIL"
}
