//! Messages: what `send` queues and `recv` returns.

use std::any::Any;

use bytemuck::Pod;
use serde::{Deserialize, Serialize};

/// A received message with its payload as a vector of `T`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message<T> {
    /// Pid of the sender.
    pub source: usize,
    /// The tag the sender gave.
    pub tag: u32,
    /// The payload.
    pub data: Vec<T>,
}

/// What [`crate::Ctx::peek`] tells about the first queued message (HBSPlib `get_tag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageInfo {
    /// Pid of the sender.
    pub source: usize,
    /// The tag the sender gave.
    pub tag: u32,
    /// Payload length in bytes.
    pub bytes: usize,
}

/// A typed payload that can also be seen as bytes, so a receiver asking for the sender's type
/// gets the vector back without a copy.
pub(crate) trait Payload: Send {
    fn bytes(&self) -> &[u8];
    /// Bytes of the payload, without reading them (a [`Zeros`] payload's are never made).
    fn len(&self) -> usize {
        self.bytes().len()
    }
    /// Bytes the allocation can hold.
    fn capacity_bytes(&self) -> usize;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Pod + Send> Payload for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }

    fn capacity_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A payload of `len` zero bytes that owns no memory: a view of a region of zeros shared by
/// every such payload, so a program can send the size of its data without building it (see
/// [`crate::Ctx::send_zeros`]). Backends count, charge and deliver it like any payload of
/// `len` bytes.
pub(crate) struct Zeros(pub usize);

impl Payload for Zeros {
    fn bytes(&self) -> &[u8] {
        &zero_region(self.0)[..self.0]
    }

    fn len(&self) -> usize {
        self.0
    }

    /// Nothing to reuse: the region is shared.
    fn capacity_bytes(&self) -> usize {
        0
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The smallest zero region: above glibc's largest mmap threshold (32 MiB), so the region
/// always comes straight from `mmap` and `calloc` does not write it.
const MIN_ZERO_REGION: usize = 64 << 20;

/// At least `len` zero bytes, shared by every [`Zeros`] payload and never written: the
/// operating system maps its pages on first read (to its shared zero page), so it takes
/// address space, not memory. A longer message replaces it with a region twice as long; the
/// old one stays mapped (a reader may still hold it), at most as large as the new one.
fn zero_region(len: usize) -> &'static [u8] {
    static REGION: std::sync::Mutex<&'static [u8]> = std::sync::Mutex::new(&[]);
    let mut region = REGION
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if region.len() < len {
        let size = len.max(MIN_ZERO_REGION).next_power_of_two();
        *region = vec![0u8; size].leak();
    }
    *region
}

/// The longest [`Zeros`] payload: a zero region must fit the address space.
pub(crate) const MAX_ZEROS: usize = 1 << 40;

/// A message in flight.
pub(crate) struct Envelope {
    pub source: usize,
    pub tag: u32,
    /// Sent by a collective: kept out of the user's queue.
    pub internal: bool,
    /// Collectives' side channel (e.g. the total item count of a scatter).
    pub meta: u64,
    pub payload: Box<dyn Payload>,
}

impl Envelope {
    pub fn info(&self) -> MessageInfo {
        MessageInfo {
            source: self.source,
            tag: self.tag,
            bytes: self.payload.len(),
        }
    }

    /// The payload as `Vec<T>`: moved if it was sent as `T`, copied from its bytes otherwise.
    /// The caller has checked that the length is a multiple of `size_of::<T>()`.
    pub fn into_vec<T: Pod>(self) -> Vec<T> {
        if std::mem::size_of::<T>() == 0 {
            Vec::new()
        } else if self.payload.as_any().is::<Vec<T>>() {
            *self
                .payload
                .into_any()
                .downcast::<Vec<T>>()
                .unwrap_or_default()
        } else {
            bytemuck::pod_collect_to_vec(self.payload.bytes())
        }
    }
}

/// A node's spare vectors: messages handed back with [`crate::Ctx::recycle`], reused by later
/// sends of the same element type so that a steady exchange allocates nothing. Allocating a
/// fresh megabyte-sized vector every superstep costs page faults whenever the allocator has
/// given the memory back to the system, and lands the copy in cold cache lines.
#[derive(Default)]
pub(crate) struct Pool {
    /// Oldest first.
    buffers: Vec<Box<dyn Payload>>,
}

impl Pool {
    /// Spare vectors kept; beyond this, or [`Pool::MAX_BYTES`], the oldest go back to the
    /// allocator, so a program that recycles more than it sends holds on to little memory.
    pub const MAX_BUFFERS: usize = 16;
    /// Bytes kept, unless the newest vector alone is larger.
    pub const MAX_BYTES: usize = 64 << 20;

    /// Keeps `buffer` for reuse (empty allocations are not worth keeping).
    pub fn put(&mut self, buffer: Box<dyn Payload>) {
        if buffer.capacity_bytes() == 0 {
            return;
        }
        self.buffers.push(buffer);
        let mut bytes: usize = self.buffers.iter().map(|b| b.capacity_bytes()).sum();
        while self.buffers.len() > Self::MAX_BUFFERS
            || (self.buffers.len() > 1 && bytes > Self::MAX_BYTES)
        {
            bytes -= self.buffers.remove(0).capacity_bytes();
        }
    }

    /// An empty vector of `T` with room for `len` items: the smallest that fits, the most
    /// recently returned among equals (its memory is the likeliest to be in cache).
    pub fn take<T: Pod + Send>(&mut self, len: usize) -> Option<Vec<T>> {
        let mut vector = self.take_fitting::<T>(len)?;
        vector.clear();
        Some(vector)
    }

    /// A vector of exactly `len` items, chosen as by [`Pool::take`], for the caller to
    /// overwrite: it keeps the items it held (zeros past them), so a recycled vector as long
    /// as `len` is handed over without writing a byte.
    pub fn take_to_overwrite<T: Pod + Send>(&mut self, len: usize) -> Option<Vec<T>> {
        let mut vector = self.take_fitting::<T>(len)?;
        vector.truncate(len);
        vector.resize(len, T::zeroed());
        Some(vector)
    }

    fn take_fitting<T: Pod + Send>(&mut self, len: usize) -> Option<Vec<T>> {
        let capacity = |b: &dyn Payload| b.as_any().downcast_ref::<Vec<T>>().map(Vec::capacity);
        let (at, _) = self
            .buffers
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(i, b)| capacity(b.as_ref()).map(|c| (i, c)))
            .filter(|&(_, c)| c >= len)
            .min_by_key(|&(_, c)| c)?;
        let buffer = self.buffers.remove(at);
        buffer.into_any().downcast::<Vec<T>>().ok().map(|v| *v)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.buffers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_are_as_long_as_asked_share_one_region_and_are_never_pooled() {
        let (short, long) = (Zeros(10), Zeros(MIN_ZERO_REGION + 1));
        assert_eq!(short.bytes(), &[0u8; 10]);
        assert_eq!(long.bytes().len(), MIN_ZERO_REGION + 1);
        assert_eq!(Zeros(3).bytes().as_ptr(), Zeros(5).bytes().as_ptr());
        let mut pool = Pool::default();
        pool.put(Box::new(short));
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn a_vector_taken_to_overwrite_keeps_its_items_and_is_zero_only_past_them() {
        let mut pool = Pool::default();
        let mut recycled = vec![7u64; 100];
        recycled.reserve_exact(50);
        pool.put(Box::new(recycled));
        let shorter = pool.take_to_overwrite::<u64>(60).unwrap();
        assert_eq!(
            shorter,
            vec![7u64; 60],
            "nothing written over the recycled items"
        );
        pool.put(Box::new(shorter));
        let longer = pool.take_to_overwrite::<u64>(120).unwrap();
        assert_eq!((longer[59], longer[60], longer.len()), (7, 0, 120));
        assert!(
            pool.take_to_overwrite::<u64>(1).is_none(),
            "taken out of the pool"
        );
    }

    #[test]
    fn pool_hands_back_the_smallest_fitting_vector_of_the_right_type() {
        let mut pool = Pool::default();
        pool.put(Box::new(Vec::<u64>::with_capacity(100)));
        pool.put(Box::new(Vec::<u64>::with_capacity(10)));
        pool.put(Box::new(vec![7u32; 50]));
        pool.put(Box::new(Vec::<u8>::new()));
        assert_eq!(pool.len(), 3, "an empty allocation is not kept");
        assert!(pool.take::<u64>(101).is_none());
        let small = pool.take::<u64>(5).unwrap();
        assert!(small.is_empty() && (10..100).contains(&small.capacity()));
        let words = pool.take::<u32>(50).unwrap();
        assert!(
            words.is_empty() && words.capacity() >= 50,
            "cleared, memory kept"
        );
        assert!(pool.take::<u32>(1).is_none());
        assert!(pool.take::<u64>(100).is_some());
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn pool_keeps_only_the_newest_buffers() {
        let mut pool = Pool::default();
        for len in 1..=Pool::MAX_BUFFERS + 4 {
            pool.put(Box::new(Vec::<u8>::with_capacity(len)));
        }
        assert_eq!(pool.len(), Pool::MAX_BUFFERS);
        assert!(
            pool.take::<u8>(1).unwrap().capacity() >= 5,
            "the four oldest were dropped"
        );
    }

    #[test]
    fn pool_bounds_the_memory_it_keeps_but_keeps_the_newest() {
        let mut pool = Pool::default();
        let big = Pool::MAX_BYTES / 2 + 1;
        pool.put(Box::new(Vec::<u8>::with_capacity(big)));
        pool.put(Box::new(Vec::<u8>::with_capacity(big)));
        assert_eq!(pool.len(), 1, "two halves and a bit exceed the bound");
        pool.put(Box::new(Vec::<u8>::with_capacity(2 * Pool::MAX_BYTES)));
        assert_eq!(pool.len(), 1);
        assert!(pool.take::<u8>(Pool::MAX_BYTES + 1).is_some());
    }
}
