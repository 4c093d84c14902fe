// Package events parses the token events of NEP-297 `EVENT_JSON:` logs:
// NEP-141 fungible tokens (ft_mint, ft_transfer, ft_burn), NEP-171
// non-fungible tokens (nft_mint, nft_transfer, nft_burn) and NEP-245 multi
// tokens (mt_mint, mt_transfer, mt_burn), into one Row per affected account.
//
// Invariants a reader must know:
//   - Parse never panics, whatever the log. A log that is not an event, or
//     an event of another standard or of another event name, gives no rows
//     and no error (it is not ours to judge). An event of the three
//     standards with one of the nine names whose JSON does not follow the
//     standard gives ErrMalformed and no rows: the whole log is skipped,
//     never half of it.
//   - Rows come in a fixed order, numbered by Row.Index from 0: per item of
//     `data`, per token of its `token_ids` (NFT, MT), the account that gave
//     (old owner of a transfer, owner of a burn) before the account that
//     got (new owner, owner of a mint). A transfer gives two rows, a mint or
//     a burn one. (log, Index) is therefore unique within an outcome.
//   - Delta is signed, as the affected account's balance moved: +amount for
//     what it got, -amount for what it gave; for NFTs +1 or -1.
//   - Only successful outcomes count (NEP-297): choosing them is the
//     caller's job.
package events
