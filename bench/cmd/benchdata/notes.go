package main

import (
	"encoding/csv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// tagWords, topics and filler words of the synthetic notes. Each note carries
// 0..3 tags drawn uniformly from tagWords (so one tag is on about 6% of notes)
// and one topic word (on about 2.5%), which keeps the benchmark's tag= and
// q= lists at a few dozen matches per account.
var (
	tagWords = []string{"work", "home", "research", "ideas", "todo", "finance", "travel", "reading",
		"health", "meetings", "project-a", "project-b", "archive", "draft", "urgent", "later",
		"family", "recipes", "code", "design", "review", "books", "music", "sport"}
	topicWords = []string{"acquisition", "budget", "compliance", "dividend", "earnings", "forecast",
		"hedging", "inflation", "liquidity", "margin", "merger", "portfolio", "quarterly", "rebalance",
		"revenue", "volatility", "yield", "bond", "equity", "futures", "options", "treasury", "currency",
		"commodity", "valuation", "audit", "pension", "mortgage", "insurance", "savings", "tax",
		"invoice", "payroll", "strategy", "roadmap", "hiring", "onboarding", "retention", "pricing", "supplier"}
	filler = strings.Fields(`the a of to and in is it that for on with as was at by this be from
or have an they which one you were her all she there would their we him been has when who will
more no if out so said what up its about into than them can only other new some could time these
two may then do first any my now such like our over man me even most made after also did many
before must through back years where much your way well down should because each just those
people how too little state good very make world still own see men work long get here between
both life being under never day same another know while last might us great old year off come
since against go came right used take three market price stock share trade note call plan week
month team report data chart close open high low volume review check follow update`)
)

// writeNotes writes n notes spread round-robin over accounts, with the
// columns id, account_id, title, content, tags, created_at, updated_at,
// version (the COPY column list the harness uses). Ids have the
// service's shape: "note_" and a UUIDv7 in the 26-character ULID encoding,
// with the note's creation time in the UUID's timestamp.
func writeNotes(w *csv.Writer, accounts []string, n int, seed uint64) (int, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6e6f746573))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	step := 2 * 365 * 24 * time.Hour / time.Duration(max(n, 1))
	rec := make([]string, 8)
	var sb strings.Builder
	for i := range n {
		created := start.Add(time.Duration(i) * step).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
		updated := created.Add(time.Duration(rng.IntN(72*3600)) * time.Second)
		topic := topicWords[rng.IntN(len(topicWords))]

		sb.Reset()
		words := 3 + rng.IntN(4)
		for j := range words {
			if j > 0 {
				sb.WriteByte(' ')
			}
			if j == 1 {
				sb.WriteString(topic)
			} else {
				sb.WriteString(filler[rng.IntN(len(filler))])
			}
		}
		title := sb.String()

		sb.Reset()
		words = 40 + rng.IntN(80)
		for j := range words {
			if j > 0 {
				if j%12 == 0 {
					sb.WriteString(". ")
				} else {
					sb.WriteByte(' ')
				}
			}
			if j == words/2 {
				sb.WriteString(topic)
			} else {
				sb.WriteString(filler[rng.IntN(len(filler))])
			}
		}
		sb.WriteByte('.')
		content := sb.String()

		k := rng.IntN(4)
		picked := make([]string, 0, k)
		for _, idx := range rng.Perm(len(tagWords))[:k] {
			picked = append(picked, tagWords[idx])
		}

		rec[0] = noteID(created, rng)
		rec[1] = accounts[i%len(accounts)]
		rec[2] = title
		rec[3] = content
		rec[4] = "{" + strings.Join(picked, ",") + "}"
		rec[5] = created.Format(time.RFC3339Nano)
		rec[6] = updated.Format(time.RFC3339Nano)
		rec[7] = strconv.Itoa(1 + rng.IntN(3))
		if err := w.Write(rec); err != nil {
			return i, err
		}
	}
	return n, nil
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// noteID builds a UUIDv7 (48-bit millisecond time, version 7, variant 10,
// random rest) and writes it like the service does.
func noteID(t time.Time, rng *rand.Rand) string {
	ms := uint64(t.UnixMilli())
	hi := ms<<16 | 0x7000 | rng.Uint64()&0x0fff
	lo := 0x8000000000000000 | rng.Uint64()&0x3fffffffffffffff
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return "note_" + string(out[:])
}
