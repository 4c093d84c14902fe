package indexer

// BundleWeight is bundleWeight, for the tests that weigh real bundles
// (their sources import this package).
var BundleWeight = bundleWeight

// WeightPerByte is weightPerByte.
const WeightPerByte = weightPerByte
