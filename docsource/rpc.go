package docsource

import "github.com/nearline/nearline/rpcsource"

// RPC calls an upstream node (*near.Client implements it): genesis and
// protocol configs, Lake's head.
type RPC = rpcsource.RPC
