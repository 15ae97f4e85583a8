package core

import "slices"

// The live jobs by ID: an open-addressing hash table with linear probing
// that holds slots (see Core.slabs) and hashes, not IDs. A job keeps its
// ID's hash, so it leaves the table without its ID being read or hashed
// again: ending a job touches one line of the table and no string, where a
// Go map of a million strings costs two or three cache misses. A probe
// compares hashes before it reads a job.

// idEntry is a live job's place in the table.
type idEntry struct {
	hash uint32
	slot uint32 // the job's slot + 1; 0 marks an empty entry
}

// idTable is the table, in shards chosen by a hash's top byte that each
// grow on their own: growing moves a 256th of the entries at a time, so no
// submission pauses to move a million.
type idTable struct {
	shards [256]idShard
	n      int
}

// idShard is one shard: len(entries) is 0 or a power of two at least
// twice n, so probes stay short.
type idShard struct {
	entries []idEntry
	n       int
}

func (t *idTable) shard(h uint32) *idShard { return &t.shards[h>>24] }

// at is the job in slot.
func (c *Core) at(slot uint32) *job { return &c.slabs[slot/jobSlab][slot%jobSlab] }

// lookup returns the live job with the ID, or nil.
func (c *Core) lookup(id string) *job {
	if c.ids.n == 0 {
		return nil
	}
	h := idHash(id)
	t := c.ids.shard(h)
	if t.n == 0 {
		return nil
	}
	mask := uint32(len(t.entries) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.entries[i]
		if e.slot == 0 {
			return nil
		}
		if e.hash == h {
			if j := c.at(e.slot - 1); j.id == id {
				return j
			}
		}
	}
}

// index adds job j, whose ID is not in the table, with its hash set.
func (c *Core) index(j *job) {
	t := c.ids.shard(j.hash)
	if 2*(t.n+1) > len(t.entries) {
		t.grow()
	}
	t.put(idEntry{hash: j.hash, slot: j.slot + 1})
	t.n++
	c.ids.n++
}

func (t *idShard) put(e idEntry) {
	mask := uint32(len(t.entries) - 1)
	i := e.hash & mask
	for t.entries[i].slot != 0 {
		i = (i + 1) & mask
	}
	t.entries[i] = e
}

// grow doubles the shard, from the hashes it holds: no job is read.
func (t *idShard) grow() {
	old := t.entries
	t.entries = make([]idEntry, max(8, 2*len(old)))
	for _, e := range old {
		if e.slot != 0 {
			t.put(e)
		}
	}
}

// unindex removes job j, which is in the table. The entries after it in
// its run move back into the hole where their probes would pass it, so
// that no probe stops short (backward-shift deletion: no tombstones).
func (c *Core) unindex(j *job) {
	t := c.ids.shard(j.hash)
	mask := uint32(len(t.entries) - 1)
	i := j.hash & mask
	for t.entries[i].slot != j.slot+1 {
		i = (i + 1) & mask
	}
	for k := (i + 1) & mask; t.entries[k].slot != 0; k = (k + 1) & mask {
		e := t.entries[k]
		// e may fill the hole at i if i lies on its probe, from its home
		// to k: if it is at least as far from home as from the hole.
		if (k-e.hash)&mask >= (k-i)&mask {
			t.entries[i] = e
			i = k
		}
	}
	t.entries[i] = idEntry{}
	t.n--
	c.ids.n--
}

// clone copies the table.
func (t *idTable) clone() idTable {
	n := idTable{n: t.n}
	for i := range t.shards {
		n.shards[i] = idShard{entries: slices.Clone(t.shards[i].entries), n: t.shards[i].n}
	}
	return n
}

// idHash hashes a job ID eight bytes at a time. It is fixed, not seeded:
// the core has no randomness, and job IDs are made by the server (or a
// simulator's trace), not chosen by whoever submits.
func idHash(id string) uint32 {
	h := uint64(len(id)) * 0x9e3779b97f4a7c15
	for len(id) >= 8 {
		w := uint64(id[0]) | uint64(id[1])<<8 | uint64(id[2])<<16 | uint64(id[3])<<24 |
			uint64(id[4])<<32 | uint64(id[5])<<40 | uint64(id[6])<<48 | uint64(id[7])<<56
		h = mix(h ^ w)
		id = id[8:]
	}
	var w uint64
	for i := range len(id) {
		w |= uint64(id[i]) << (8 * i)
	}
	h = mix(h ^ w)
	return uint32(h >> 32)
}

// mix is the finaliser of SplitMix64: every bit of x moves every bit out.
func mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
