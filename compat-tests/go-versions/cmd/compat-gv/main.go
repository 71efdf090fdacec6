// compat-gv: the Go client version scenarios (compat-tests/suites/goversions.sh). One source tree, built once per
// pinned github.com/apache/rocketmq-client-go/v2 release with -modfile=<version>/go.mod (see ../../build.sh); the
// small API differences between releases live in build-tagged shim files.
//
//	compat-gv -ns 127.0.0.1:9876 -broker 127.0.0.1:PORT [-broker-name broker-a] [-run all|SYNC,PUSH,...] [-run-id R]
//
// Prints one JSON line per scenario on stdout, in the Java runner's format, with the id prefixed by the release
// (v2.0.0 -> GV200-SYNC) and the client named after it (go-v2.0.0):
//
//	{"id":"GV200-SYNC","client":"go-v2.0.0","status":"PASS|FAIL|SKIP","ms":1234,"detail":"..."}
//
// Scenario groups (each in its own child process, so a client panic or hang cannot take the others down; the three
// run concurrently):
//
//	send: SYNC ASYNC ONEWAY BATCH PUSH PULL POLL — the sends go to one topic; a clustering push consumer then has to
//	      receive every message exactly once with its fields intact (the send scenarios are judged on their own
//	      messages), a pull consumer reads the same messages back with PullFrom, and (where the release has it) a
//	      subscribing pull consumer with Poll/ACK
//	order: ORDER — sharding-key queue selector + orderly push consumer
//	txn:   TXN — transaction producer: commit, rollback, unknown -> check-back -> commit / rollback
//
// The client under test is used only for producing and consuming: topics are created and routes/offsets read with
// raw Remoting frames (raw.go), so every release runs the very same checks.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const clientModule = "github.com/apache/rocketmq-client-go/v2"

type config struct {
	ns, broker, brokerName, runID string
	scale                         float64
}

var (
	cfg       config
	clientVer = "unknown" // the release linked in (from the build info)
	idPrefix  = "GV"
)

// scenario groups in run order; every id of a group is reported by that group's child
var groups = []struct {
	name string
	ids  []string
	tmo  time.Duration
	fn   func(ctx context.Context, want map[string]bool)
}{
	{"send", []string{"SYNC", "ASYNC", "ONEWAY", "BATCH", "PUSH", "PULL", "POLL"}, 100 * time.Second, groupSend},
	{"order", []string{"ORDER"}, 75 * time.Second, groupOrder},
	{"txn", []string{"TXN"}, 90 * time.Second, groupTxn},
}

func init() {
	clientVer = clientVerAtInit()
	// v2.0.0 -> GV200, v2.1.2 -> GV212, v2.1.3-0.2025... -> GV213
	v := strings.TrimPrefix(clientVer, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	idPrefix = "GV" + strings.ReplaceAll(v, ".", "")
}

// batchHeaderBroken: v2.0.0 and v2.1.0 never fill SendMessageRequestV2Header.DefaultTopicQueueNums (a string there),
// so SEND_BATCH_MESSAGE carries "d":"" and the Java broker answers NumberFormatException; v2.1.1 made it an int.
var batchHeaderBroken = map[string]string{
	"v2.0.0": "v2.0.0 sends SEND_BATCH_MESSAGE with an empty header field d (defaultTopicQueueNums)",
	"v2.1.0": "v2.1.0 sends SEND_BATCH_MESSAGE with an empty header field d (defaultTopicQueueNums)",
}[clientVerAtInit()]

func clientVerAtInit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == clientModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func fullID(short string) string { return idPrefix + "-" + short }

var emitMu sync.Mutex

// emit prints one result line (stdout carries JSON lines only).
func emit(short, status string, ms int64, detail string) {
	emitMu.Lock()
	defer emitMu.Unlock()
	fmt.Println(line(short, status, ms, detail))
}

func line(short, status string, ms int64, detail string) string {
	return fmt.Sprintf(`{"id":%s,"client":%s,"status":%s,"ms":%d,"detail":%s}`, jstr(fullID(short)), jstr("go-"+clientVer),
		jstr(status), ms, jstr(detail))
}

func jstr(s string) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// result is what a scenario reports; pass() / fail() / na() build it.
type result struct {
	status string
	ms     int64
	detail string
}

func pass(t0 time.Time, f string, a ...interface{}) result {
	return result{"PASS", time.Since(t0).Milliseconds(), fmt.Sprintf(f, a...)}
}
func fail(t0 time.Time, f string, a ...interface{}) result {
	return result{"FAIL", time.Since(t0).Milliseconds(), fmt.Sprintf(f, a...)}
}

// na: the release lacks the feature. Reported with status NA: run.sh shows it and counts it neither passed nor
// failed (nothing was checked).
func na(f string, a ...interface{}) result { return result{"NA", 0, "n/a: " + fmt.Sprintf(f, a...)} }

func report(want map[string]bool, short string, r result) {
	if want[short] {
		emit(short, r.status, r.ms, r.detail)
	}
}

func main() {
	fs := flag.NewFlagSet("compat-gv", flag.ExitOnError)
	fs.StringVar(&cfg.ns, "ns", "127.0.0.1:9876", "NameServer address (always passed explicitly to the client)")
	fs.StringVar(&cfg.broker, "broker", "127.0.0.1:20911", "broker address (topics are created there)")
	fs.StringVar(&cfg.brokerName, "broker-name", "broker-a", "broker name")
	run := fs.String("run", "all", "'all' or comma-separated short ids (SYNC,ASYNC,ONEWAY,BATCH,PUSH,PULL,POLL,ORDER,TXN)")
	fs.StringVar(&cfg.runID, "run-id", "", "suffix for unique topic/group names (default: unix seconds)")
	fs.Float64Var(&cfg.scale, "timeout-scale", 1.0, "multiply every timeout")
	logPath := fs.String("log", "", "Go client log file (default $TMPDIR/compat-gv-<runid>.log)")
	group := fs.String("group", "", "internal: run one group in this process")
	list := fs.Bool("list", false, "print the full scenario ids and exit")
	_ = fs.Parse(os.Args[1:])
	if cfg.runID == "" {
		cfg.runID = fmt.Sprintf("%d", time.Now().Unix())
	}
	if *list {
		for _, g := range groups {
			for _, id := range g.ids {
				fmt.Println(fullID(id))
			}
		}
		return
	}
	if *logPath == "" {
		*logPath = fmt.Sprintf("%s/compat-gv-%s.log", os.TempDir(), cfg.runID)
	}
	setupLog(*logPath)
	want := map[string]bool{}
	for _, id := range strings.Split(*run, ",") {
		id = strings.ToUpper(strings.TrimSpace(id))
		id = strings.TrimPrefix(id, idPrefix+"-")
		if id == "ALL" {
			for _, g := range groups {
				for _, s := range g.ids {
					want[s] = true
				}
			}
		} else if id != "" {
			want[id] = true
		}
	}
	if *group != "" { // child: run that group here
		for _, g := range groups {
			if g.name == *group {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(float64(g.tmo)*cfg.scale))
				g.fn(ctx, want)
				cancel()
			}
		}
		return
	}
	// parent: one child process per group, all at once (separate topics and groups; mostly waiting), lines relayed
	// in group order
	type childOut struct {
		lines []string
		ok    bool
	}
	outs := make([]chan childOut, len(groups))
	for i, g := range groups {
		var ids []string
		for _, id := range g.ids {
			if want[id] {
				ids = append(ids, id)
			}
		}
		outs[i] = make(chan childOut, 1)
		if len(ids) == 0 {
			outs[i] <- childOut{nil, true}
			continue
		}
		go func(ch chan childOut, name string, ids []string, tmo time.Duration) {
			lines, ok := runChild(name, ids, tmo, *run, *logPath)
			ch <- childOut{lines, ok}
		}(outs[i], g.name, ids, time.Duration(float64(g.tmo)*cfg.scale)+20*time.Second)
	}
	failed := false
	for _, ch := range outs {
		o := <-ch
		for _, l := range o.lines {
			fmt.Println(l)
		}
		failed = failed || !o.ok
	}
	if failed {
		os.Exit(1)
	}
}

// runChild re-executes this binary for one group and returns its result lines; ids it did not report become FAIL.
func runChild(group string, ids []string, tmo time.Duration, run, logPath string) ([]string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), tmo)
	defer cancel()
	args := []string{"-ns", cfg.ns, "-broker", cfg.broker, "-broker-name", cfg.brokerName, "-run", run,
		"-run-id", cfg.runID, "-timeout-scale", fmt.Sprint(cfg.scale), "-log", logPath, "-group", group}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	seen := map[string]bool{}
	ok := true
	var lines []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		var r struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.ID != "" {
			lines = append(lines, l)
			seen[r.ID] = true
			if r.Status != "PASS" {
				ok = false
			}
		}
	}
	tail := stderr.String()
	if len(tail) > 600 {
		tail = tail[len(tail)-600:]
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %s", tmo)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !seen[fullID(id)] {
			ok = false
			lines = append(lines, line(id, "FAIL", time.Since(t0).Milliseconds(),
				fmt.Sprintf("group %s ended without reporting it (%v): %s", group, err, tail)))
		}
	}
	return lines, ok
}

// ------------------------------------------------------------------------------------------------------------------
// logging: every release's rlog has SetLogger; v2.0.0 has no SetOutputPath/SetLogLevel, so a small file logger
// implementing the union of the Logger interfaces is installed instead.

type fileLogger struct {
	mu  sync.Mutex
	f   *os.File
	lvl int
}

var lvlNames = map[string]int{"debug": 0, "info": 1, "warn": 2, "warning": 2, "error": 3, "fatal": 4}

func (l *fileLogger) log(lvl int, tag, msg string, fields map[string]interface{}) {
	if lvl < l.lvl || l.f == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "%s %s [%s] %s %v\n", time.Now().Format("15:04:05.000"), tag, clientVer, msg, fields)
}
func (l *fileLogger) Debug(m string, f map[string]interface{})   { l.log(0, "DEBUG", m, f) }
func (l *fileLogger) Info(m string, f map[string]interface{})    { l.log(1, "INFO", m, f) }
func (l *fileLogger) Warning(m string, f map[string]interface{}) { l.log(2, "WARN", m, f) }
func (l *fileLogger) Error(m string, f map[string]interface{})   { l.log(3, "ERROR", m, f) }
func (l *fileLogger) Fatal(m string, f map[string]interface{})   { l.log(4, "FATAL", m, f) }
func (l *fileLogger) Level(level string) {
	if v, ok := lvlNames[strings.ToLower(level)]; ok {
		l.lvl = v
	}
}
func (l *fileLogger) OutputPath(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	l.f = f
	return nil
}

func setupLog(path string) {
	l := &fileLogger{lvl: 2}
	if v := os.Getenv("ROCKETMQ_GO_LOG_LEVEL"); v != "" {
		l.Level(v)
	}
	if err := l.OutputPath(path); err != nil {
		fmt.Fprintf(os.Stderr, "log %s: %v\n", path, err)
	}
	rlog.SetLogger(l)
}
