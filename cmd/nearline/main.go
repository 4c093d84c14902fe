// Command nearline indexes a NEAR network into PostgreSQL and answers NEAR's
// JSON-RPC read methods from it. main only wires: every subcommand parses
// its own FlagSet (each flag defaulting from an environment variable) and
// runs under one context that SIGINT/SIGTERM cancel.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/nearline/nearline/internal/envflag"
)

// environment is what a subcommand gets from the process.
type environment struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	logger         *slog.Logger
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *environment, args []string) error
}

func commands() []command {
	return []command{
		{"run", "migrate, index and serve in one process", runRun},
		{"index", "follow finalized blocks of an upstream node into PostgreSQL", runIndex},
		{"serve", "answer NEAR JSON-RPC read methods from PostgreSQL", runServe},
		{"migrate", "apply the embedded database migrations", runMigrate},
		{"migrate status", "list the migrations, applied or pending", runMigrateStatus},
		{"migrate down", "undo the migrations above a version", runMigrateDown},
		{"sim", "serve a simulated NEAR node (deterministic chain) over JSON-RPC", runSim},
		{"status", "print the archive's indexed range and cursor", runStatus},
		{"verify", "compare the archive's answers with a node's", runVerify},
		{"health", "ask a running server's /health (exit 0 when healthy)", runHealth},
		{"version", "print the version and commit nearline was built from", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &environment{
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	stopProfile := func() {}
	if path := os.Getenv(cpuProfileEnv); path != "" {
		var err error
		if stopProfile, err = startCPUProfile(path); err != nil {
			fmt.Fprintln(os.Stderr, "nearline:", err)
			os.Exit(1)
		}
	}
	code := run(ctx, env, os.Args[1:])
	stopProfile()
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, env *environment, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, env, append(slices.Clone(args[1:]), "-h"))
		}
		usage(env.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, words, ok := lookup(args)
	if !ok {
		fmt.Fprintf(env.stderr, "nearline: unknown command %q\n\n", args[0])
		usage(env.stderr)
		return 2
	}
	err := c.run(ctx, env, args[words:])
	var status *exitStatusError
	switch {
	case errors.As(err, &status):
		env.logger.Error("nearline "+c.name+" failed", "err", err)
		return status.status
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, envflag.ErrUsage):
		return 2
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// SIGINT/SIGTERM arrived before the command could finish (a
		// migration, say): its transaction was rolled back, and
		// stopping on request is not a failure.
		env.logger.Info("nearline "+c.name+" interrupted", "err", err)
		return 0
	}
	env.logger.Error("nearline "+c.name+" failed", "err", err)
	return 1
}

// lookup finds the command args start with, the longest of those named
// ("migrate status" before "migrate"), and how many words name it.
func lookup(args []string) (command, int, bool) {
	var found command
	words := 0
	for _, c := range commands() {
		name := strings.Fields(c.name)
		if len(name) > words && len(args) >= len(name) && slices.Equal(name, args[:len(name)]) {
			found, words = c, len(name)
		}
	}
	return found, words, words > 0
}

// exitStatusError gives a command's failure an exit status other than 1
// (an interrupted command whose error carries one exits with it too).
type exitStatusError struct {
	status int
	err    error
}

func (e *exitStatusError) Error() string { return e.err.Error() }
func (e *exitStatusError) Unwrap() error { return e.err }

// unreachable marks a database or node a command could not reach: exit
// status 2, like a usage error, for the commands that promise it (verify).
func unreachable(err error) error { return &exitStatusError{status: 2, err: err} }

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: nearline <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'nearline <command> -h' for a command's flags. Every flag also reads an environment variable, shown in its help.")
}

// newFlagSet returns the FlagSet of the command name, writing to stderr.
// Its -h prints the synopsis, the examples, then the flags.
func newFlagSet(env *environment, name, synopsis string, examples ...envflag.Example) *flag.FlagSet {
	return envflag.NewFlagSet("nearline "+name, synopsis, env.stderr, examples...)
}
