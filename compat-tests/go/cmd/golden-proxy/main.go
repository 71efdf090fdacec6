// golden-proxy: frame-aware TCP proxy that records client->server Remoting request frames.
//
//	golden-proxy -out DIR -prefix go -pair 127.0.0.1:29876=127.0.0.1:9876 -pair 127.0.0.1:13911=127.0.0.1:12911 \
//	             -rewrite 127.0.0.1:12911=127.0.0.1:13911
//
// Every complete request frame (flag bit 0 clear) a client sends is written to DIR/<prefix>-<code>-<n>.bin (the exact
// bytes on the wire: 4-byte length prefix included), n counting per code from 1. -rewrite replaces a byte string by
// one OF THE SAME LENGTH in server->client frames, so route data points the client at the broker-side proxy.
// Runs until SIGTERM/SIGINT.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

var (
	outDir   string
	prefix   string
	maxPer   int
	mu       sync.Mutex
	counts   = map[int]int{}
	rewrites [][2][]byte
)

func readFrame(r io.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("frame too large: %d", n)
	}
	f := make([]byte, 4+n)
	copy(f, lb[:])
	if _, err := io.ReadFull(r, f[4:]); err != nil {
		return nil, err
	}
	return f, nil
}

// header returns (code, flag, ok) of a frame (JSON or ROCKETMQ binary header).
func header(f []byte) (int, int, bool) {
	if len(f) < 8 {
		return 0, 0, false
	}
	hl := binary.BigEndian.Uint32(f[4:8])
	typ, hlen := hl>>24, int(hl&0xFFFFFF)
	if 8+hlen > len(f) {
		return 0, 0, false
	}
	h := f[8 : 8+hlen]
	if typ == 0 {
		var v struct {
			Code int `json:"code"`
			Flag int `json:"flag"`
		}
		if json.Unmarshal(h, &v) != nil {
			return 0, 0, false
		}
		return v.Code, v.Flag, true
	}
	if len(h) < 14 { // code(2) language(1) version(2) opaque(4) flag(4)
		return 0, 0, false
	}
	return int(int16(binary.BigEndian.Uint16(h[0:2]))), int(binary.BigEndian.Uint32(h[9:13])), true
}

func record(f []byte) {
	code, flag, ok := header(f)
	if !ok || flag&1 == 1 {
		return
	}
	mu.Lock()
	counts[code]++
	n := counts[code]
	mu.Unlock()
	if n > maxPer {
		return
	}
	p := filepath.Join(outDir, fmt.Sprintf("%s-%d-%d.bin", prefix, code, n))
	if err := os.WriteFile(p, f, 0o644); err != nil {
		log.Printf("write %s: %v", p, err)
	}
}

func pipe(src, dst net.Conn, toServer bool) {
	defer dst.Close()
	defer src.Close()
	for {
		f, err := readFrame(src)
		if err != nil {
			return
		}
		if toServer {
			record(f)
		} else {
			for _, rw := range rewrites {
				f = bytes.ReplaceAll(f, rw[0], rw[1])
			}
		}
		if _, err := dst.Write(f); err != nil {
			return
		}
	}
}

func serve(listen, target string) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		log.Fatalf("listen %s: %v", listen, err)
	}
	log.Printf("proxy %s -> %s", listen, target)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func(c net.Conn) {
			s, err := net.Dial("tcp", target)
			if err != nil {
				log.Printf("dial %s: %v", target, err)
				c.Close()
				return
			}
			go pipe(c, s, true)
			go pipe(s, c, false)
		}(c)
	}
}

func main() {
	var pairs, rws multi
	flag.StringVar(&outDir, "out", ".", "output directory")
	flag.StringVar(&prefix, "prefix", "go", "file name prefix")
	flag.IntVar(&maxPer, "max", 3, "frames kept per request code")
	flag.Var(&pairs, "pair", "listen=target (repeatable)")
	flag.Var(&rws, "rewrite", "from=to, same length, applied to server->client frames (repeatable)")
	flag.Parse()
	for _, r := range rws {
		kv := strings.SplitN(r, "=", 2)
		if len(kv) != 2 || len(kv[0]) != len(kv[1]) {
			log.Fatalf("bad -rewrite %q (need from=to of equal length)", r)
		}
		rewrites = append(rewrites, [2][]byte{[]byte(kv[0]), []byte(kv[1])})
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, p := range pairs {
		kv := strings.SplitN(p, "=", 2)
		if len(kv) != 2 {
			log.Fatalf("bad -pair %q", p)
		}
		go serve(kv[0], kv[1])
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
