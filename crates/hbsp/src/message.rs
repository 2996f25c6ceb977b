//! Messages: what `send` queues and `recv` returns.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytemuck::Pod;
use serde::{Deserialize, Serialize};

/// A received message with its payload as a vector of `T`.
///
/// Dropping a large message hands its vector back to the node that sent it, as
/// [`crate::Ctx::recycle`] does, so a plain `send`/`recv` exchange stops allocating once it
/// is going: a fresh megabyte-sized vector per superstep costs page faults and, in glibc, an
/// `mmap`/`munmap` pair. [`Message::into_data`] takes the vector out for good.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message<T> {
    /// Pid of the sender.
    pub source: usize,
    /// The tag the sender gave.
    pub tag: u32,
    /// The payload.
    pub data: Vec<T>,
    /// Where the vector goes when the message is dropped; `None` for small payloads.
    #[serde(skip)]
    home: Option<Home<T>>,
}

impl<T> Message<T> {
    /// A message that goes nowhere when dropped.
    pub fn new(source: usize, tag: u32, data: Vec<T>) -> Self {
        Self {
            source,
            tag,
            data,
            home: None,
        }
    }

    /// The payload, kept by the caller instead of going back to its sender.
    pub fn into_data(self) -> Vec<T> {
        self.into_parts().2
    }

    /// `(source, tag, data)`, the payload kept by the caller as by [`Message::into_data`].
    pub fn into_parts(mut self) -> (usize, u32, Vec<T>) {
        self.home = None;
        (self.source, self.tag, std::mem::take(&mut self.data))
    }
}

impl<T: Pod + Send> Message<T> {
    /// A received message whose vector, if large enough to be worth reusing, goes back to
    /// `source`'s spare vectors through `desk` when dropped.
    pub(crate) fn returning(
        source: usize,
        tag: u32,
        data: Vec<T>,
        desk: Option<&Arc<ReturnDesk>>,
    ) -> Self {
        let worth_returning = data.capacity() * std::mem::size_of::<T>() >= ReturnDesk::MIN_BYTES;
        let home = desk.filter(|_| worth_returning).map(|desk| Home {
            desk: Arc::clone(desk),
            owner: source,
            give: |desk, owner, data| desk.deposit(owner, Box::new(data)),
        });
        Self {
            source,
            tag,
            data,
            home,
        }
    }
}

impl<T: PartialEq> PartialEq for Message<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.source, self.tag, &self.data) == (other.source, other.tag, &other.data)
    }
}

impl<T> Drop for Message<T> {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            (home.give)(&home.desk, home.owner, std::mem::take(&mut self.data));
        }
    }
}

/// A received vector's way back to the node that sent it.
struct Home<T> {
    desk: Arc<ReturnDesk>,
    owner: usize,
    /// Boxes the vector as a [`Payload`]: made where `T: Pod + Send` is known, so that
    /// `Message<T>` itself needs no bounds.
    give: fn(&ReturnDesk, usize, Vec<T>),
}

impl<T> Clone for Home<T> {
    fn clone(&self) -> Self {
        Self {
            desk: Arc::clone(&self.desk),
            owner: self.owner,
            give: self.give,
        }
    }
}

impl<T> std::fmt::Debug for Home<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Home({})", self.owner)
    }
}

/// Vectors left for one node, and their total capacity in bytes.
type Returned = (Vec<Box<dyn Payload>>, usize);

/// Vectors on their way back to the nodes that sent them (dropped or recycled messages),
/// one slot per node, until that node's next send or sync takes them into its [`Pool`].
/// Shared by a run's nodes and by the messages they hand out, which may outlive the run:
/// once closed it keeps nothing.
pub(crate) struct ReturnDesk {
    /// `any[pid]`: set after every deposit for `pid`, so its sends and syncs skip the lock
    /// when nothing came back. Packed apart from the slots: every node reads its flag at every
    /// sync, and at 65,536 nodes the flags fit in cache where the slots do not.
    any: Vec<AtomicBool>,
    /// `slots[pid]`: the vectors left for `pid` and their total capacity in bytes.
    slots: Vec<Mutex<Returned>>,
    closed: AtomicBool,
}

impl ReturnDesk {
    /// Smallest vector a dropped message returns: below it the allocator serves sizes from
    /// its free lists without faults, and a slot would fill with vectors too small to reuse.
    pub const MIN_BYTES: usize = 64 << 10;

    pub fn new(p: usize) -> Arc<Self> {
        Arc::new(Self {
            any: (0..p).map(|_| AtomicBool::new(false)).collect(),
            slots: (0..p).map(|_| Mutex::default()).collect(),
            closed: AtomicBool::new(false),
        })
    }

    /// Leaves `buffer` for node `owner`; dropped instead once the run is over, for an unknown
    /// node, or when the slot already holds as much as a [`Pool`] keeps (the owner has not
    /// come for its vectors).
    pub fn deposit(&self, owner: usize, buffer: Box<dyn Payload>) {
        let Some(slot) = self.slots.get(owner) else {
            return;
        };
        // Under the lock: a deposit racing `close` either lands before the slot is emptied
        // or sees it closed.
        let mut held = relock(slot);
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        if held.1 + buffer.capacity_bytes() > Pool::MAX_BYTES && !held.0.is_empty() {
            return;
        }
        held.1 += buffer.capacity_bytes();
        held.0.push(buffer);
        self.any[owner].store(true, Ordering::Release);
    }

    /// The vectors left for node `owner` since it last looked.
    pub fn collect(&self, owner: usize) -> Vec<Box<dyn Payload>> {
        let (Some(any), Some(slot)) = (self.any.get(owner), self.slots.get(owner)) else {
            return Vec::new();
        };
        // A plain load first: every sync comes here, and a read leaves the cache line shared
        // with the neighbouring nodes' flags instead of taking it from them.
        if !any.load(Ordering::Relaxed) || !any.swap(false, Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *relock(slot)).0
    }

    /// Ends the run: frees what is held and whatever is dropped later.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for slot in &self.slots {
            drop(std::mem::take(&mut *relock(slot)));
        }
    }
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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

    fn buffer(bytes: usize) -> Box<dyn Payload> {
        Box::new(Vec::<u8>::with_capacity(bytes))
    }

    #[test]
    fn the_desk_holds_what_a_pool_keeps_and_nothing_once_closed() {
        let desk = ReturnDesk::new(2);
        let half = Pool::MAX_BYTES / 2;
        for _ in 0..3 {
            desk.deposit(1, buffer(half));
        }
        desk.deposit(7, buffer(half));
        assert_eq!(desk.collect(1).len(), 2, "a third half would exceed a pool");
        assert!(desk.collect(1).is_empty(), "collected once");
        desk.deposit(0, buffer(2 * Pool::MAX_BYTES));
        assert_eq!(
            desk.collect(0).len(),
            1,
            "one vector, however large, is kept"
        );
        desk.deposit(0, buffer(half));
        desk.close();
        desk.deposit(0, buffer(half));
        assert!(
            desk.collect(0).is_empty(),
            "closing frees held and later vectors"
        );
    }

    #[test]
    fn a_message_goes_home_only_if_large_and_not_taken_apart() {
        let desk = ReturnDesk::new(2);
        let large = ReturnDesk::MIN_BYTES;
        drop(Message::returning(1, 0, vec![0u8; large], Some(&desk)));
        drop(Message::returning(1, 0, vec![0u8; large - 1], Some(&desk)));
        let kept = Message::returning(1, 0, vec![0u8; large], Some(&desk)).into_data();
        let collected = desk.collect(1);
        assert_eq!(collected.len(), 1);
        assert_eq!(collected[0].capacity_bytes(), large);
        assert_eq!(kept.len(), large);
        let clone = Message::returning(1, 0, vec![0u8; large], Some(&desk)).clone();
        assert_eq!(
            clone,
            Message::new(1, 0, vec![0u8; large]),
            "equal ignores the home"
        );
    }
}
