package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/nearline/nearline/sim"
)

// The simulator holds the whole chain in memory (~1 GiB per 1,000
// mainnet-shaped blocks). In the benchmark's own process every garbage
// collection of the indexer would scan it; --sim-process runs it in a child
// process instead, as `nearline sim` and `nearline index` would run.

// chainArgs are the flags that select the chain, for the child.
func chainArgs(o options) []string {
	return []string{
		"--blocks", strconv.FormatUint(o.blocks, 10), "--shards", strconv.Itoa(o.shards),
		"--txs-per-block", strconv.Itoa(o.txsPerBlock), "--deploy-rate", strconv.FormatFloat(o.deployRate, 'g', -1, 64),
		"--seed", strconv.FormatUint(o.seed, 10), "--latency", o.latency.String(),
	}
}

// startSimProcess starts this program as the simulator and waits until it
// serves the produced chain.
func startSimProcess(ctx context.Context, o options) (*chain, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.Command(self, append(chainArgs(o), "--sim-listen", "127.0.0.1:0")...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("simulator stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("simulator stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start simulator process: %w", err)
	}
	stop := func() {
		_ = stdin.Close() // the child exits at EOF
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) != 3 || fields[0] != "READY" {
		stop()
		return nil, fmt.Errorf("simulator process did not start (%q): %v", line, err)
	}
	// The genesis is a function of the chain flags: build it here.
	node, err := sim.New(ctx, simConfig(o), nil)
	if err != nil {
		stop()
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	genesis, err := json.Marshal(node.Genesis())
	_ = node.Close(ctx)
	if err != nil {
		stop()
		return nil, fmt.Errorf("encode genesis: %w", err)
	}
	return &chain{plainURL: fields[1], distantURL: fields[2], genesis: genesis, close: stop, pid: cmd.Process.Pid}, nil
}

// runSimChild produces the chain, serves it without and with latency on
// loopback, prints "READY plainURL distantURL" and serves until stdin ends.
func runSimChild(ctx context.Context, o options) error {
	setGC()
	ch, err := produceChain(ctx, o)
	if err != nil {
		return err
	}
	defer ch.close()
	// The servers listen on loopback TCP: the parent reaches them there.
	fmt.Printf("READY %s %s\n", ch.plainURL, ch.distantURL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
