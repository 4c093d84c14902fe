package main

import (
	"flag"
	"strings"

	"github.com/nearline/nearline/internal/envflag"
)

// Every command parses a flag.FlagSet of its own whose flags fill the
// packages' Configs. envflag gives each flag the command line leaves out
// the value of its environment variable (envVar).

// envNames are the variables of the flags that do not read NEARLINE_ and
// their name in capitals, by command and flag.
var envNames = map[string]string{
	"migrate down to":       "NEARLINE_MIGRATE_DOWN_TO",
	"run sim":               "NEARLINE_RUN_SIM",
	"serve request-timeout": "NEARLINE_RPC_REQUEST_TIMEOUT",
	"sim listen":            "NEARLINE_SIM_LISTEN",
	"verify from":           "NEARLINE_VERIFY_FROM",
	"verify to":             "NEARLINE_VERIFY_TO",
	"verify sample":         "NEARLINE_VERIFY_SAMPLE",
	"verify seed":           "NEARLINE_VERIFY_SEED",
	"verify accounts":       "NEARLINE_VERIFY_ACCOUNTS",
	"verify concurrency":    "NEARLINE_VERIFY_CONCURRENCY",
	"verify timeout":        "NEARLINE_VERIFY_TIMEOUT",
	"verify show":           "NEARLINE_VERIFY_SHOW",
}

// envVar is the variable the flag name of fs reads.
func envVar(fs *flag.FlagSet, name string) string {
	if v, ok := envNames[strings.TrimPrefix(fs.Name(), "nearline ")+" "+name]; ok {
		return v
	}
	return "NEARLINE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flags is where the commands' flags default from: the process's
// variables, by envVar.
func (env *environment) flags() envflag.Env {
	return envflag.Env{Getenv: env.getenv, Var: envVar}
}
