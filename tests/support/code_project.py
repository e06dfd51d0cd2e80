"""A small project in every language the code index parses (issue 37), for its tests.

Each file defines a few symbols with doc comments, one calls another, one class extends or
implements another, so search, the reference graph and the map all have something to find.
``write_polyglot(root)`` writes it; ``SYMBOLS`` says where each symbol is (path, first line).
"""

from __future__ import annotations

from pathlib import Path

FILES: dict[str, str] = {
    "shop/pricing.py": '''\
"""Prices and discounts for the shop."""

import math


class PriceRule:
    """A rule that changes the price of a cart line."""

    def apply(self, amount):
        return amount


class BulkDiscount(PriceRule):
    """Ten percent off when a customer buys many items."""

    def apply(self, amount):
        return round_cents(amount * 0.9)


def round_cents(value):
    """Round a money amount to whole cents."""
    return math.floor(value * 100 + 0.5) / 100


def parse_http_date(text):
    """Parse an HTTP date header such as 'Sun, 06 Nov 1994 08:49:37 GMT'."""
    parts = text.split()
    return parts[1], parts[2], parts[3]


def default_rule():
    return PriceRule()
''',
    "src/main/java/com/example/inventory/Warehouse.java": '''\
package com.example.inventory;

import java.util.List;

/**
 * Storage of goods: every item the shop can ship is kept in a warehouse.
 */
public interface Warehouse {
    /** How many units of the product are left on the shelves. */
    int stockLevel(String sku);
}
''',
    "src/main/java/com/example/inventory/ColdStorage.java": '''\
package com.example.inventory;

import java.util.HashMap;
import java.util.Map;

/**
 * A refrigerated warehouse for frozen food.
 */
public class ColdStorage extends BaseStore implements Warehouse {
    private final Map<String, Integer> shelves = new HashMap<>();

    /** Counts the frozen units of one product. */
    @Override
    public int stockLevel(String sku) {
        return shelves.getOrDefault(sku, 0);
    }

    /**
     * Moves expired goods to the disposal queue before the nightly audit.
     */
    @Scheduled(cron = "0 0 2 * * *")
    public void purgeExpired() {
        audit(shelves.size());
    }
}
''',
    "src/main/java/com/example/inventory/BaseStore.java": '''\
package com.example.inventory;

/** Common bookkeeping of every store. */
public abstract class BaseStore {
    /** Writes an audit line with the number of shelves checked. */
    protected void audit(int count) {
        System.out.println("audited " + count);
    }
}
''',
    "app/src/Cart.kt": '''\
package com.example.app

/** A shopping cart that remembers what the customer picked. */
interface Basket {
    fun total(): Int
}

/** The default cart, backed by a list. */
open class ListCart(private val items: List<Int>) : Basket {
    /** Adds up the prices of all items. */
    override fun total(): Int {
        return items.sum()
    }
}

fun emptyCart(): ListCart {
    return ListCart(listOf())
}
''',
    "web/checkout.js": '''\
// Checkout flow of the web shop.
import { sendReceipt } from "./mail.js";

/** Computes the shipping fee for a parcel weight in grams. */
export function shippingFee(grams) {
  return grams > 1000 ? 9 : 4;
}

class Checkout {
  /** Confirms the order and mails the receipt. */
  confirm(order) {
    const fee = shippingFee(order.weight);
    sendReceipt(order.email, fee);
  }
}

export const formatTotal = (cents) => (cents / 100).toFixed(2);
''',
    "web/session.ts": '''\
/** Who is logged in, and until when. */
export interface UserSession {
  userId: string;
  expiresAt: number;
}

/** Keeps sessions in memory and drops the expired ones. */
export class SessionStore {
  private sessions = new Map<string, UserSession>();

  /** Forgets every session whose time is up. */
  evictExpired(now: number): void {
    for (const [id, s] of this.sessions) {
      if (s.expiresAt < now) this.sessions.delete(id);
    }
  }
}

export type SessionId = string;
''',
    "svc/queue.go": '''\
package svc

import "fmt"

// JobQueue hands background jobs to workers in arrival order.
type JobQueue struct {
	jobs []string
}

// Runner is anything that can run a job.
type Runner interface {
	Run(job string) error
}

// Push appends a job at the end of the queue.
func (q *JobQueue) Push(job string) {
	q.jobs = append(q.jobs, job)
	fmt.Println("queued", job)
}

// Drain runs every queued job with the runner.
func Drain(q *JobQueue, r Runner) {
	for _, j := range q.jobs {
		r.Run(j)
	}
}
''',
    "engine/src/lib.rs": '''\
use std::collections::HashMap;

/// A token bucket that limits how often a client may call the API.
pub struct RateLimiter {
    tokens: HashMap<String, u32>,
}

/// Something that can decide whether a request may pass.
pub trait Gate {
    fn allow(&mut self, client: &str) -> bool;
}

impl Gate for RateLimiter {
    /// Takes one token from the client's bucket.
    fn allow(&mut self, client: &str) -> bool {
        let left = self.tokens.entry(client.to_string()).or_insert(10);
        refill_hint(*left);
        *left > 0
    }
}

/// Prints how many tokens are left.
fn refill_hint(left: u32) {
    println!("{} tokens left", left);
}
''',
    "native/checksum.c": '''\
#include <stdint.h>
#include <stddef.h>

/* Computes the CRC-32 checksum of a buffer, as zlib does. */
uint32_t crc32_buffer(const uint8_t *data, size_t length) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc = mix_byte(crc, data[i]);
    }
    return ~crc;
}

struct ring_buffer {
    uint8_t *bytes;
    size_t head;
};
''',
    "native/matrix.cpp": '''\
#include <vector>

namespace linalg {

// A dense matrix of doubles stored row by row.
class Matrix : public Shape {
public:
    // Multiplies two matrices; the column count of a must equal the row count of b.
    Matrix multiply(const Matrix &b) const;
    int rows;
};

Matrix Matrix::multiply(const Matrix &b) const {
    Matrix out;
    out.rows = transpose_rows(rows);
    return out;
}

}  // namespace linalg
''',
    "README.md": '''\
# Shop

A small shop with prices, an inventory, a cart and a job queue.
Run the nightly audit with `make audit`.
''',
}

# Where the tests expect each symbol: (path, first line of its definition).
SYMBOLS = {
    "BulkDiscount": ("shop/pricing.py", 13),
    "round_cents": ("shop/pricing.py", 20),
    "parse_http_date": ("shop/pricing.py", 25),
    "default_rule": ("shop/pricing.py", 31),
    "Warehouse": ("src/main/java/com/example/inventory/Warehouse.java", 8),
    "ColdStorage": ("src/main/java/com/example/inventory/ColdStorage.java", 9),
    "purgeExpired": ("src/main/java/com/example/inventory/ColdStorage.java", 21),
    "ListCart": ("app/src/Cart.kt", 9),
    "shippingFee": ("web/checkout.js", 5),
    "SessionStore": ("web/session.ts", 8),
    "Push": ("svc/queue.go", 16),
    "RateLimiter": ("engine/src/lib.rs", 4),
    "crc32_buffer": ("native/checksum.c", 5),
    "multiply": ("native/matrix.cpp", 13),
}


def write_polyglot(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
