//! A deterministic first-fit allocator of splat slots over `[0, capacity)`.
//!
//! Source: seed 000 `SlotAllocator` (first fit, coalescing free, overlap and double free refused,
//! exhaustion an error — never a silent null) and DESIGN.md "Splat sink".

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// A contiguous run of slots owned by one branch for its whole life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SlotRange {
    /// First slot.
    pub offset: u32,
    /// Number of slots (> 0).
    pub count: u32,
}

impl SlotRange {
    /// One past the last slot.
    pub fn end(&self) -> u64 {
        u64::from(self.offset) + u64::from(self.count)
    }
}

/// First-fit allocator. `free` blocks are kept sorted and coalesced; live ranges are tracked so a
/// free of anything but a live range is refused.
#[derive(Clone, Debug)]
pub struct SlotAllocator {
    capacity: u32,
    /// Free blocks: offset → count, disjoint, non-adjacent.
    free: BTreeMap<u32, u32>,
    /// Live ranges: offset → count.
    live: BTreeMap<u32, u32>,
}

impl SlotAllocator {
    /// An allocator with every slot free.
    pub fn new(capacity: u32) -> Self {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        SlotAllocator {
            capacity,
            free,
            live: BTreeMap::new(),
        }
    }

    /// Total slots.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Slots owned by no range (possibly spread over several blocks).
    pub fn available(&self) -> u32 {
        self.free.values().sum()
    }

    /// The free blocks in ascending offset order (a copy).
    pub fn blocks(&self) -> Vec<SlotRange> {
        self.free
            .iter()
            .map(|(&offset, &count)| SlotRange { offset, count })
            .collect()
    }

    /// The live ranges in ascending offset order (a copy).
    pub fn live(&self) -> Vec<SlotRange> {
        self.live
            .iter()
            .map(|(&offset, &count)| SlotRange { offset, count })
            .collect()
    }

    fn err(&self, reason: &'static str, offset: u32, count: u32) -> Error {
        Error::Slots {
            reason,
            offset,
            count,
            capacity: self.capacity,
        }
    }

    /// Reserve `count` contiguous slots at the lowest offset where they fit.
    ///
    /// # Errors
    /// [`Error::Slots`] when `count` is 0 or no free block holds `count` slots (exhaustion).
    pub fn allocate(&mut self, count: u32) -> Result<SlotRange> {
        if count == 0 {
            return Err(self.err("a range needs at least one slot", 0, 0));
        }
        let Some((&offset, &block)) = self.free.iter().find(|(_, c)| **c >= count) else {
            return Err(self.err("exhausted: no free block holds the request", 0, count));
        };
        self.free.remove(&offset);
        if block > count {
            self.free.insert(offset + count, block - count);
        }
        self.live.insert(offset, count);
        Ok(SlotRange { offset, count })
    }

    /// Give back a range exactly as [`SlotAllocator::allocate`] returned it, coalescing with free
    /// neighbours.
    ///
    /// # Errors
    /// [`Error::Slots`] when the range is empty or leaves the capacity, overlaps free slots (double
    /// free, or two owners of the same slots), or is not a live range.
    pub fn free(&mut self, range: SlotRange) -> Result<()> {
        let SlotRange { offset, count } = range;
        if count == 0 || range.end() > u64::from(self.capacity) {
            return Err(self.err("range is empty or outside the capacity", offset, count));
        }
        let end = offset + count;
        let before = self.free.range(..end).next_back().map(|(&o, &c)| (o, c));
        if let Some((o, c)) = before
            && o + c > offset
        {
            let reason = if o <= offset && o + c >= end {
                "double free: the range is already free"
            } else {
                "range overlaps free slots"
            };
            return Err(self.err(reason, offset, count));
        }
        if self.live.get(&offset) != Some(&count) {
            return Err(self.err(
                "not a live range: free exactly what allocate returned",
                offset,
                count,
            ));
        }
        self.live.remove(&offset);
        let (mut o, mut c) = (offset, count);
        if let Some((po, pc)) = before
            && po + pc == offset
        {
            self.free.remove(&po);
            o = po;
            c += pc;
        }
        if let Some(nc) = self.free.remove(&end) {
            c += nc;
        }
        self.free.insert(o, c);
        Ok(())
    }
}
