package engine

import "container/list"

// prefixCache remembers conversation prefixes by their PrefixBlock hash, least recently used
// out, holding at most capacity tokens. It is owned by the prefill goroutine.
type prefixCache struct {
	capacity int
	size     int
	lru      *list.List // of *cacheEntry, most recent at the front
	entries  map[uint64]*list.Element
}

type cacheEntry struct {
	hash   uint64
	tokens int // tokens this block adds beyond the previous block
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, lru: list.New(), entries: map[uint64]*list.Element{}}
}

// lookup returns how many leading prompt tokens are cached: the length up to the last block
// of the longest run of cached blocks from the first. A block whose earlier blocks were evicted
// answers nothing, as in a prefix cache whose blocks chain to their parents: its KV attends to
// theirs.
func (c *prefixCache) lookup(prefix []PrefixBlock) int {
	hit := 0
	for _, b := range prefix {
		el, ok := c.entries[b.Hash]
		if !ok {
			break
		}
		c.lru.MoveToFront(el)
		hit = b.Tokens
	}
	return hit
}

// insert records every block of prefix as cached.
func (c *prefixCache) insert(prefix []PrefixBlock) {
	prev := 0
	for _, b := range prefix {
		delta := b.Tokens - prev
		prev = b.Tokens
		if el, ok := c.entries[b.Hash]; ok {
			c.lru.MoveToFront(el)
			continue
		}
		c.entries[b.Hash] = c.lru.PushFront(&cacheEntry{hash: b.Hash, tokens: delta})
		c.size += delta
	}
	for c.size > c.capacity && c.lru.Len() > 0 {
		el := c.lru.Back()
		e := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.entries, e.hash)
		c.size -= e.tokens
	}
}
