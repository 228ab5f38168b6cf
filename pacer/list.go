package pacer

import "time"

// link is a node of an intrusive doubly linked list; embed it in the element so that
// insertion and removal allocate nothing.
type link[T any] struct {
	prev, next *link[T]
	v          T
}

// chain is a doubly linked list of links, oldest first. The zero value is empty.
type chain[T any] struct {
	head, tail *link[T]
	n          int
}

func (c *chain[T]) pushBack(l *link[T]) {
	l.prev, l.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = l
	} else {
		c.head = l
	}
	c.tail = l
	c.n++
}

func (c *chain[T]) remove(l *link[T]) {
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		c.head = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		c.tail = l.prev
	}
	l.prev, l.next = nil, nil
	c.n--
}

// popFront removes and returns the oldest link, or nil.
func (c *chain[T]) popFront() *link[T] {
	l := c.head
	if l != nil {
		c.remove(l)
	}
	return l
}

// linkTime is a blocked Acquire call's entry in ledger.waits: its start time.
type linkTime = link[time.Time]
