package main

import (
	"context"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// composeFile is the part of docker-compose.yml the tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Restart     string            `yaml:"restart"`
		Scale       string            `yaml:"scale"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

// commandEnvVars are the environment variables of a command's flags, read
// from its help.
func commandEnvVars(t *testing.T, name string) map[string]bool {
	t.Helper()
	env, _, stderr := testEnv(nil)
	require.Equal(t, 0, run(context.Background(), env, append(strings.Fields(name), "-h")))
	vars := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(env (NEARLINE_\w+)\)`).FindAllStringSubmatch(stderr.String(), -1) {
		vars[m[1]] = true
	}
	require.NotEmpty(t, vars, "no variables in the help of %s", name)
	return vars
}

// interpolated matches compose's ${VAR}, ${VAR:-default} and ${VAR-default}.
var interpolated = regexp.MustCompile(`\$\{(\w+)(?::?-[^}]*)?\}`)

// TestComposeFile holds docker-compose.yml to what the operator docs
// promise: every service restarts unless stopped; nearline has a
// healthcheck through `nearline health`; the simulator runs by default and
// SIM_REPLICAS=0 turns it off; SQL is published on loopback; every
// NEARLINE_* variable a service passes is a flag variable of the command
// it runs; every setting of `nearline run` reaches it from the environment
// (but the database and listen address inside the compose project, those
// of the embedded database, and a genesis file, which would need a
// mount); and every
// variable .env.example shows is one the compose file reads.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var c composeFile
	require.NoError(t, yaml.Unmarshal(raw, &c))
	require.ElementsMatch(t, []string{"postgres", "sim", "nearline"}, slices.Collect(maps.Keys(c.Services)))

	for name, s := range c.Services {
		require.Equal(t, "unless-stopped", s.Restart, "restart policy of %s", name)
	}
	nl, sim, pg := c.Services["nearline"], c.Services["sim"], c.Services["postgres"]
	require.Equal(t, []string{"CMD", "nearline", "health"}, nl.Healthcheck.Test)
	require.True(t, slices.ContainsFunc(commands(), func(c command) bool { return c.name == "health" }))
	require.Equal(t, "${SIM_REPLICAS:-1}", sim.Scale, "the simulator runs unless SIM_REPLICAS=0")
	require.Equal(t, []string{"${SQL_PORT:-127.0.0.1:}:5432"}, pg.Ports, "SQL published on a loopback port by default")
	require.Equal(t, "http://sim:3030", defaultOf(t, nl.Environment["NEARLINE_UPSTREAM"]), "the demo follows the simulator")
	require.Equal(t, "0.0.0.0:3030", nl.Environment["NEARLINE_LISTEN"])
	require.Equal(t, "postgres://nearline:${POSTGRES_PASSWORD:-nearline}@postgres:5432/nearline?sslmode=disable", nl.Environment["NEARLINE_DATABASE_URL"])

	read := map[string]bool{} // every variable the compose file interpolates
	for _, m := range interpolated.FindAllStringSubmatch(string(raw), -1) {
		read[m[1]] = true
	}
	for _, name := range []string{"nearline", "sim"} {
		s := c.Services[name]
		vars := commandEnvVars(t, s.Command[0])
		for key, value := range s.Environment {
			if strings.HasPrefix(key, "NEARLINE_") {
				require.True(t, vars[key], "%s passes %s, which no flag of nearline %s reads", name, key, s.Command[0])
			}
			for _, m := range interpolated.FindAllStringSubmatch(value, -1) {
				if strings.HasPrefix(m[1], "NEARLINE_") {
					require.Equal(t, key, m[1], "%s: %s takes its value from another NEARLINE_ variable", name, key)
				}
			}
		}
	}
	// The embedded database, a genesis file and run --sim have no place in
	// a container beside its own PostgreSQL and simulator services.
	notPassed := []string{"NEARLINE_DATA_DIR", "NEARLINE_PG_BIN", "NEARLINE_GENESIS", "NEARLINE_RUN_SIM"}
	for v := range commandEnvVars(t, "run") {
		if slices.Contains(notPassed, v) {
			require.NotContains(t, nl.Environment, v)
			continue
		}
		require.Contains(t, nl.Environment, v, "a setting of nearline run the compose file does not pass")
		if v != "NEARLINE_LISTEN" && v != "NEARLINE_DATABASE_URL" { // the compose file's own
			require.True(t, read[v], "%s is not taken from the environment", v)
		}
	}

	example, err := os.ReadFile("../../.env.example")
	require.NoError(t, err)
	shown := regexp.MustCompile(`(?m)^#?(\w+)=`).FindAllStringSubmatch(string(example), -1)
	require.Greater(t, len(shown), 10)
	for _, m := range shown {
		require.True(t, read[m[1]], ".env.example shows %s, which docker-compose.yml does not read", m[1])
	}
	require.Contains(t, string(example), "SIM_REPLICAS=0\n#NEARLINE_SOURCE=neardata", "the mainnet lines")
	require.Contains(t, string(raw), "docker compose down -v", "the way to start over")
}

// defaultOf is the default of a ${VAR:-default} value.
func defaultOf(t *testing.T, value string) string {
	t.Helper()
	m := regexp.MustCompile(`^\$\{\w+:-(.*)\}$`).FindStringSubmatch(value)
	require.NotNil(t, m, "%q is not ${VAR:-default}", value)
	return m[1]
}
