package sim

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/nearline/nearline/near"
)

// generator makes the chain's transactions, from its own random stream and
// the current state, so that almost all of them succeed.
type generator struct {
	c        *chain
	r        *rand.Rand
	users    []string            // top-level named accounts that sign
	subs     []string            // created sub-accounts that can be deleted
	implicit int                 // implicit accounts made so far
	keyIdx   map[string]int      // next key index per account
	extra    map[string][]genKey // added keys per account
	counter  int
	ftUsers  []string // accounts registered with the FT contract
	nftCount int
	// nftOwners are the owners of minted NFTs by token id, as of the
	// transactions generated (a transfer signed before the mint or the
	// previous transfer ran fails, as on a real chain).
	nftOwners map[string]string
	produced  []bool // shards with a chunk at the height being generated
	// kinds are the transaction kinds drawn from: txKinds, and the global
	// contract kinds when the protocol has them.
	kinds []kindWeight
	// Global contracts: hashes deployed by hash, accounts that deployed by
	// account id, and the accounts made to use them.
	globalHashes, globalOwners, globalUsers []string
}

func newGenerator(c *chain) *generator {
	g := &generator{c: c, r: newRand(c.cfg.Seed, streamTxs), keyIdx: map[string]int{}, extra: map[string][]genKey{},
		nftOwners: map[string]string{}}
	g.kinds = txKinds
	if c.cfg.ProtocolVersion >= minGlobalContractsProtocol {
		g.kinds = append(slices.Clone(txKinds), globalKinds()...)
	}
	g.kinds = append(slices.Clone(g.kinds), metaYieldKinds()...)
	for _, u := range userNames {
		g.users = append(g.users, u+".near")
	}
	return g
}

// genKey is a key the generator added, with its permission.
type genKey struct {
	pk string
	fc *near.FunctionCallPermission
}

// callPlan signs a zero-deposit call with a matching function call key of
// the signer when it has one (half of the time), else with its full key.
func (g *generator) callPlan(signer, receiver string, a near.ActionView) (txPlan, bool) {
	p, ok := g.plan(signer, receiver, a)
	if !ok || !a.FunctionCall.Deposit.IsZero() || g.r.IntN(2) == 0 {
		return p, ok
	}
	for _, k := range g.extra[signer] {
		if k.fc == nil || k.fc.ReceiverID != receiver || g.c.st.keyAt(signer, k.pk, g.c.next) == nil {
			continue
		}
		allowed := len(k.fc.MethodNames) == 0
		for _, m := range k.fc.MethodNames {
			allowed = allowed || m == a.FunctionCall.MethodName
		}
		if allowed {
			p.key = k.pk
			return p, true
		}
	}
	return p, ok
}

type kindWeight struct {
	weight int
	make   func(g *generator, h uint64) (txPlan, bool)
}

var txKinds = []kindWeight{
	{40, (*generator).transfer},
	{4, (*generator).implicitTransfer},
	{8, (*generator).createAccount},
	{8, (*generator).addKey},
	{4, (*generator).deleteKey},
	{2, (*generator).deployContract},
	{5, (*generator).setStatus},
	{4, (*generator).guestbook},
	{3, (*generator).ftRegister},
	{3, (*generator).ftTransfer},
	{2, (*generator).ftTransferCall},
	{2, (*generator).nftMint},
	// Token events (NEP-297 logs) beyond the above: user-to-user FT
	// transfers, burns and NFT transfers. The example FT contract mints
	// without an event at init and the NFT one has no burn.
	{2, (*generator).ftUserTransfer},
	{1, (*generator).ftBurn},
	{2, (*generator).nftTransfer},
	{3, (*generator).stake},
	{3, (*generator).deleteAccount},
	{1, (*generator).badCall},
}

// generate returns the transactions of height h by signer shard; shards
// without a chunk get none.
func (g *generator) generate(h uint64, produced []bool) [][]txPlan {
	out := make([][]txPlan, len(produced))
	if g.c.cfg.TxsPerBlock == 0 {
		return out
	}
	total := 0
	for _, k := range g.kinds {
		total += k.weight
	}
	g.produced = produced
	n := g.r.IntN(2*g.c.cfg.TxsPerBlock + 1)
	for range n {
		kind := g.drawKind(total)
		p, ok := kind.make(g, h)
		if !ok {
			continue
		}
		s := g.c.shardOf(p.signer)
		out[s] = append(out[s], p)
	}
	return out
}

// drawKind picks a transaction kind by weight; with DeployRate set, deploys
// come at that rate and every other kind by weight among the rest.
func (g *generator) drawKind(total int) kindWeight {
	rate := g.c.cfg.DeployRate
	if rate > 0 && g.r.Float64() < rate {
		return kindWeight{make: (*generator).deployContract}
	}
	for {
		pick := g.r.IntN(total)
		for _, k := range g.kinds {
			if pick >= k.weight {
				pick -= k.weight
				continue
			}
			if rate > 0 && reflect.ValueOf(k.make).Pointer() == reflect.ValueOf((*generator).deployContract).Pointer() {
				break // drawn again
			}
			return k
		}
	}
}

func (g *generator) exists(id string) bool { return g.c.st.accountAt(id, g.c.next) != nil }

func (g *generator) key0(id string) string { return publicKey(g.c.cfg.Seed, id, 0) }

func (g *generator) pickUser() string { return g.users[g.r.IntN(len(g.users))] }

func (g *generator) plan(signer, receiver string, actions ...near.ActionView) (txPlan, bool) {
	if !g.exists(signer) || !g.produced[g.c.shardOf(signer)] {
		return txPlan{}, false
	}
	return txPlan{signer: signer, key: g.key0(signer), receiver: receiver, actions: actions}, true
}

func transfer(amount near.U128) near.ActionView {
	return near.ActionView{Transfer: &near.TransferAction{Deposit: amount}}
}

func call(method, args string, gasT uint64, deposit near.U128) near.ActionView {
	return near.ActionView{FunctionCall: &near.FunctionCallAction{MethodName: method, Args: []byte(args), Gas: gasT * 1_000_000_000_000, Deposit: deposit}}
}

func (g *generator) transfer(h uint64) (txPlan, bool) {
	from, to := g.pickUser(), g.pickUser()
	if g.r.IntN(4) == 0 && len(g.subs) > 0 {
		if sub := g.subs[g.r.IntN(len(g.subs))]; g.exists(sub) {
			to = sub
		}
	}
	return g.plan(from, to, transfer(milliNEAR(1+uint64(g.r.IntN(5000)))))
}

func (g *generator) implicitTransfer(h uint64) (txPlan, bool) {
	g.implicit++
	id := hex.EncodeToString(keyBytes(g.c.cfg.Seed, "implicit", g.implicit))
	return g.plan(g.pickUser(), id, transfer(milliNEAR(100)))
}

func (g *generator) createAccount(h uint64) (txPlan, bool) {
	_, p, ok := g.createSub("sub", 5)
	return p, ok
}

// createSub plans a new sub-account "<prefix><n>.<parent>" of a random
// user: created, given amountNEAR and its first key, then the actions more.
// A planned one joins g.subs (deleting it later deletes its code and data
// too).
func (g *generator) createSub(prefix string, amountNEAR uint64, more ...near.ActionView) (string, txPlan, bool) {
	parent := g.pickUser()
	g.counter++
	id := prefix + strconv.Itoa(g.counter) + "." + parent
	actions := append([]near.ActionView{
		{CreateAccount: true},
		transfer(nearAmount(amountNEAR)),
		{AddKey: &near.AddKeyAction{PublicKey: g.key0(id), AccessKey: near.AccessKeyView{}}},
	}, more...)
	p, ok := g.plan(parent, id, actions...)
	if ok {
		g.subs = append(g.subs, id)
	}
	return id, p, ok
}

func (g *generator) addKey(h uint64) (txPlan, bool) {
	id := g.pickUser()
	g.keyIdx[id]++
	pk := publicKey(g.c.cfg.Seed, id, g.keyIdx[id])
	ak := near.AccessKeyView{}
	if g.r.IntN(2) == 0 {
		var allowance *near.U128
		if g.r.IntN(2) == 0 {
			a := milliNEAR(250)
			allowance = &a
		}
		kinds := contractKinds
		ck := kinds[g.r.IntN(len(kinds))]
		methods := []string{}
		if g.r.IntN(2) == 0 {
			methods = []string{"set_status", "add_message"}
		}
		ak.Permission.FunctionCall = &near.FunctionCallPermission{Allowance: allowance, ReceiverID: ck.account, MethodNames: methods}
	}
	p, ok := g.plan(id, id, near.ActionView{AddKey: &near.AddKeyAction{PublicKey: pk, AccessKey: ak}})
	if ok {
		g.extra[id] = append(g.extra[id], genKey{pk: pk, fc: ak.Permission.FunctionCall})
	}
	return p, ok
}

func (g *generator) deleteKey(h uint64) (txPlan, bool) {
	id := g.pickUser()
	keys := g.extra[id]
	if len(keys) == 0 {
		return txPlan{}, false
	}
	pk := keys[0].pk
	g.extra[id] = keys[1:]
	return g.plan(id, id, near.ActionView{DeleteKey: &near.DeleteKeyAction{PublicKey: pk}})
}

func (g *generator) deployContract(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	code, err := contractCode("status_message")
	if err != nil {
		return txPlan{}, false
	}
	_, p, ok := g.createSub("app", 10,
		near.ActionView{DeployContract: &near.DeployContractAction{Code: code}},
		call("set_status", `{"message":"deployed at `+fmt.Sprint(h)+`"}`, 30, near.U128{}),
	)
	return p, ok
}

var words = []string{"hello", "gm", "building", "shipping", "testing", "indexing", "archival", "nearline", "sharded", "final"}

func (g *generator) setStatus(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	msg := words[g.r.IntN(len(words))] + " " + fmt.Sprint(h)
	return g.callPlan(g.pickUser(), "status.near", call("set_status", `{"message":"`+msg+`"}`, 30, near.U128{}))
}

func (g *generator) guestbook(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	deposit := near.U128{}
	if g.r.IntN(3) == 0 {
		deposit = milliNEAR(10)
	}
	text := strings.ToUpper(words[g.r.IntN(len(words))][:1]) + words[g.r.IntN(len(words))][1:] + " at " + fmt.Sprint(h)
	return g.callPlan(g.pickUser(), "guestbook.near", call("add_message", `{"text":"`+text+`"}`, 30, deposit))
}

func (g *generator) ftRegister(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	id := g.pickUser()
	p, ok := g.plan(id, "ft.near", call("storage_deposit", `{"account_id":"`+id+`"}`, 30, milliNEAR(1250)))
	if ok {
		g.ftUsers = append(g.ftUsers, id)
	}
	return p, ok
}

func (g *generator) ftTransfer(h uint64) (txPlan, bool) {
	if g.c.vm == nil || len(g.ftUsers) == 0 {
		return txPlan{}, false
	}
	to := g.ftUsers[g.r.IntN(len(g.ftUsers))]
	amount := fmt.Sprint(1 + g.r.IntN(1_000_000))
	return g.plan("ft.near", "ft.near", call("ft_transfer", `{"receiver_id":"`+to+`","amount":"`+amount+`"}`, 30, near.U128From64(1)))
}

// ftTransferCall sends tokens to status.near, which has no ft_on_transfer:
// the call fails and the token contract's callback refunds them, through a
// data receipt.
func (g *generator) ftTransferCall(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	args := fmt.Sprintf(`{"receiver_id":"status.near","amount":"%d","msg":"height %d"}`, 1+g.r.IntN(1000), h)
	return g.plan("ft.near", "ft.near", call("ft_transfer_call", args, 100, near.U128From64(1)))
}

func (g *generator) nftMint(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	g.nftCount++
	owner := g.pickUser()
	args := fmt.Sprintf(`{"token_id":"%d","token_owner_id":"%s","token_metadata":{"title":"Token %d","description":"minted at height %d"}}`, g.nftCount, owner, g.nftCount, h)
	p, ok := g.plan("nft.near", "nft.near", call("nft_mint", args, 50, milliNEAR(100)))
	if ok {
		g.nftOwners[fmt.Sprint(g.nftCount)] = owner
	}
	return p, ok
}

// nftTransfer has an NFT's owner give it to another user.
func (g *generator) nftTransfer(h uint64) (txPlan, bool) {
	if g.c.vm == nil || g.nftCount == 0 {
		return txPlan{}, false
	}
	token := fmt.Sprint(1 + g.r.IntN(g.nftCount))
	owner, minted := g.nftOwners[token]
	to := g.pickUser()
	if !minted || to == owner {
		return txPlan{}, false
	}
	args := fmt.Sprintf(`{"receiver_id":"%s","token_id":"%s","memo":"height %d"}`, to, token, h)
	p, ok := g.plan(owner, "nft.near", call("nft_transfer", args, 30, near.U128From64(1)))
	if ok {
		g.nftOwners[token] = to
	}
	return p, ok
}

// ftUserTransfer has a registered user send tokens to another; one without
// enough fails (and logs no event).
func (g *generator) ftUserTransfer(h uint64) (txPlan, bool) {
	if g.c.vm == nil || len(g.ftUsers) < 2 {
		return txPlan{}, false
	}
	from, to := g.ftUsers[g.r.IntN(len(g.ftUsers))], g.ftUsers[g.r.IntN(len(g.ftUsers))]
	if from == to {
		return txPlan{}, false
	}
	args := fmt.Sprintf(`{"receiver_id":"%s","amount":"%d","memo":"height %d"}`, to, 1+g.r.IntN(50_000), h)
	return g.plan(from, "ft.near", call("ft_transfer", args, 30, near.U128From64(1)))
}

// ftBurn has a registered user send tokens with ft_transfer_call to
// status.near (which fails them) and, in the same receipt, leave the token
// (storage_unregister with force, burning its balance): the refund finds
// no sender and is burnt (an ft_burn event from ft_resolve_transfer).
func (g *generator) ftBurn(h uint64) (txPlan, bool) {
	if g.c.vm == nil || len(g.ftUsers) == 0 {
		return txPlan{}, false
	}
	id := g.ftUsers[g.r.IntN(len(g.ftUsers))]
	args := fmt.Sprintf(`{"receiver_id":"status.near","amount":"%d","msg":"burn at %d"}`, 1+g.r.IntN(1000), h)
	p, ok := g.plan(id, "ft.near", call("ft_transfer_call", args, 100, near.U128From64(1)),
		call("storage_unregister", `{"force":true}`, 30, near.U128From64(1)))
	if ok {
		g.ftUsers = slices.DeleteFunc(g.ftUsers, func(u string) bool { return u == id })
	}
	return p, ok
}

func (g *generator) stake(h uint64) (txPlan, bool) {
	v := g.c.validators[g.r.IntN(len(g.c.validators))]
	acc := g.c.st.accountAt(v.account, g.c.next)
	if acc == nil {
		return txPlan{}, false
	}
	return g.plan(v.account, v.account, near.ActionView{Stake: &near.StakeAction{Stake: add(acc.Locked, nearAmount(1)), PublicKey: v.key}})
}

func (g *generator) deleteAccount(h uint64) (txPlan, bool) {
	if len(g.subs) == 0 {
		return txPlan{}, false
	}
	i := g.r.IntN(len(g.subs))
	id := g.subs[i]
	if !g.exists(id) {
		return txPlan{}, false
	}
	g.subs = append(g.subs[:i], g.subs[i+1:]...)
	parent := id[strings.IndexByte(id, '.')+1:]
	return g.plan(id, id, near.ActionView{DeleteAccount: &near.DeleteAccountAction{BeneficiaryID: parent}})
}

func (g *generator) badCall(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	return g.plan(g.pickUser(), "status.near", call("no_such_method", `{}`, 10, near.U128{}))
}
