//! The ordered, bounded parallel map every tool runs its work through:
//! items cut from a source one at a time, worked on by N threads, and
//! handed to a sink strictly in source order, so the output is the same
//! for any thread count.
//!
//! There is no reader or merger thread. Each of the N worker threads, in a
//! loop: cuts the next item from the source under the source lock, works on
//! it with its own per-thread state, then, under the output lock, hands to
//! the sink every finished item whose turn has come (its own and any that
//! waited for it). Cutting and delivering are expected to be a small part
//! of the work, so doing them under a lock by whichever worker needs it
//! keeps exactly N threads busy, and no item is copied between threads
//! more than once.
//!
//! Memory is bounded: a worker may cut a new item only while fewer than
//! `threads × in_flight_per_thread` items are cut but not yet delivered; a
//! worker waiting for room sleeps on a condition variable and is woken by
//! the delivery that makes room. Formatting output straight into per-item
//! buffers (rather than allocating per record) matters here: glibc keeps a
//! reallocated block in the arena it came from, so per-record `realloc`s of
//! blocks that travel between threads contend on one arena lock.
//!
//! Stopping: a stop flag (Ctrl-C, see [`crate::runtime::interrupt`]) stops
//! the cutting; items already cut are finished and delivered in order. A
//! worker may abandon its item (return `None`, e.g. a game cut short by the
//! interrupt): every item before it is still delivered, none after it. A
//! sink may end the run ([`Flow::Stop`], e.g. a test that has decided):
//! nothing more is delivered. The first error (from the source or the sink)
//! stops the run and is returned; a panicking worker stops the run too and
//! is reported as [`WorkerPanicked`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Items in flight per worker thread by default: being cut, worked on, or
/// waiting for their turn to be delivered.
pub const DEFAULT_IN_FLIGHT_PER_THREAD: usize = 4;

/// How often a worker waiting for room re-checks whether the run stopped.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What the sink wants after an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// End the run: cut nothing more, deliver nothing more.
    Stop,
}

/// A worker thread panicked, so some items were never delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a worker thread failed; the output is incomplete")]
pub struct WorkerPanicked;

/// How a run ended, with the per-thread states.
#[derive(Debug)]
pub struct Finished<W> {
    /// The state of each worker thread, in thread order.
    pub workers: Vec<W>,
    /// Items handed to the sink.
    pub delivered: u64,
    /// Whether the run was cut short by the stop flag or an abandoned item.
    pub interrupted: bool,
    /// Whether the sink ended the run ([`Flow::Stop`]).
    pub stopped_by_sink: bool,
}

impl<W> Finished<W> {
    /// Whether every item of the source was delivered.
    pub fn complete(&self) -> bool {
        !self.interrupted && !self.stopped_by_sink
    }
}

/// The settings of an ordered map: threads, look-ahead and stop flag.
///
/// # Examples
/// ```
/// use engine::runtime::ordered::{Flow, OrderedMap};
/// let mut items = 0..100u64;
/// let mut out = Vec::new();
/// let finished = OrderedMap::new(3)
///     .run(
///         || Ok::<_, engine::runtime::ordered::WorkerPanicked>(items.next()),
///         |_thread| (),
///         |_state, n| Some(n * n),
///         |square| {
///             out.push(square);
///             Ok(Flow::Continue)
///         },
///     )
///     .unwrap();
/// assert!(finished.complete());
/// assert_eq!(out, (0..100).map(|n| n * n).collect::<Vec<_>>());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OrderedMap<'a> {
    threads: usize,
    in_flight_per_thread: usize,
    stop: Option<&'a AtomicBool>,
}

impl<'a> OrderedMap<'a> {
    /// A map over `threads` worker threads (at least one).
    pub fn new(threads: usize) -> OrderedMap<'static> {
        OrderedMap {
            threads: threads.max(1),
            in_flight_per_thread: DEFAULT_IN_FLIGHT_PER_THREAD,
            stop: None,
        }
    }

    /// Allows `n` items in flight per thread (at least one).
    pub fn in_flight_per_thread(self, n: usize) -> Self {
        OrderedMap {
            in_flight_per_thread: n.max(1),
            ..self
        }
    }

    /// Stops cutting new items once `flag` is set.
    pub fn stop_on<'b>(self, flag: &'b AtomicBool) -> OrderedMap<'b>
    where
        'a: 'b,
    {
        OrderedMap {
            threads: self.threads,
            in_flight_per_thread: self.in_flight_per_thread,
            stop: Some(flag),
        }
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs the map: `source` cuts the next item (`Ok(None)` when there is
    /// none; called under a lock, never again after `None`), `init` makes
    /// the state of worker thread `i`, `work` turns an item into its result
    /// (`None` abandons it), and `sink` takes the results in source order
    /// (called under a lock).
    ///
    /// # Errors
    /// The first error of the source or the sink; [`WorkerPanicked`]
    /// (converted into `E`) when a worker thread panicked.
    pub fn run<T, R, W, E, Src, Init, Work, Snk>(
        &self,
        source: Src,
        init: Init,
        work: Work,
        sink: Snk,
    ) -> Result<Finished<W>, E>
    where
        T: Send,
        R: Send,
        W: Send,
        E: Send + From<WorkerPanicked>,
        Src: FnMut() -> Result<Option<T>, E> + Send,
        Init: Fn(usize) -> W + Sync,
        Work: Fn(&mut W, T) -> Option<R> + Sync,
        Snk: FnMut(R) -> Result<Flow, E> + Send,
    {
        let shared = Shared {
            source: Mutex::new(SourceSide {
                source,
                next_sequence: 0,
                exhausted: false,
            }),
            room: Condvar::new(),
            waiters: AtomicUsize::new(0),
            written: AtomicU64::new(0),
            in_flight: (self.threads * self.in_flight_per_thread) as u64,
            output: Mutex::new(OutputSide {
                sink,
                waiting: BTreeMap::new(),
                next: 0,
                delivered: 0,
                end: None,
                stopped_by_sink: false,
            }),
            error: Mutex::new(None),
            stop: AtomicBool::new(false),
            external_stop: self.stop,
        };
        let joined: Vec<std::thread::Result<W>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.threads)
                .map(|i| {
                    let (shared, init, work) = (&shared, &init, &work);
                    scope.spawn(move || {
                        let _guard = StopOnPanic(&shared.stop);
                        let mut state = init(i);
                        shared.work(&mut state, work);
                        state
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
        if let Some(error) = shared.error.into_inner().ok().flatten() {
            return Err(error);
        }
        let mut workers = Vec::with_capacity(joined.len());
        for state in joined {
            workers.push(state.map_err(|_| WorkerPanicked)?);
        }
        let output = shared.output.into_inner().map_err(|_| WorkerPanicked)?;
        let source = shared.source.into_inner().map_err(|_| WorkerPanicked)?;
        let external = self.stop.is_some_and(|f| f.load(Ordering::Relaxed));
        let interrupted = output.end.is_some() && !output.stopped_by_sink || external;
        if !interrupted
            && !output.stopped_by_sink
            && (!source.exhausted || output.next != source.next_sequence)
        {
            return Err(WorkerPanicked.into());
        }
        Ok(Finished {
            workers,
            delivered: output.delivered,
            interrupted: interrupted && !output.stopped_by_sink,
            stopped_by_sink: output.stopped_by_sink,
        })
    }
}

/// The source and the numbering of the items cut from it.
struct SourceSide<Src> {
    source: Src,
    /// Sequence number of the next item cut.
    next_sequence: u64,
    /// Whether the source said it has no more items.
    exhausted: bool,
}

/// The sink and the results waiting for their turn.
struct OutputSide<R, Snk> {
    sink: Snk,
    /// Finished results by sequence number (`None`: abandoned).
    waiting: BTreeMap<u64, Option<R>>,
    /// Sequence number of the next result to deliver.
    next: u64,
    /// Results handed to the sink.
    delivered: u64,
    /// Nothing at or after this sequence number is delivered.
    end: Option<u64>,
    /// Whether the sink asked to stop.
    stopped_by_sink: bool,
}

/// What the workers share.
struct Shared<'a, Src, Snk, R, E> {
    source: Mutex<SourceSide<Src>>,
    /// Signalled when results are delivered while a worker waits for room.
    room: Condvar,
    /// Workers waiting (or about to wait) on `room`.
    waiters: AtomicUsize,
    /// Results delivered or dropped so far (a copy of `OutputSide::next`,
    /// readable without the output lock).
    written: AtomicU64,
    /// Items allowed between cut and delivered.
    in_flight: u64,
    output: Mutex<OutputSide<R, Snk>>,
    /// The first error; every worker stops after it.
    error: Mutex<Option<E>>,
    /// Set on an error, a panic, an abandoned item or a sink's stop.
    stop: AtomicBool,
    external_stop: Option<&'a AtomicBool>,
}

impl<T, R, E, Src, Snk> Shared<'_, Src, Snk, R, E>
where
    E: From<WorkerPanicked>,
    Src: FnMut() -> Result<Option<T>, E>,
    Snk: FnMut(R) -> Result<Flow, E>,
{
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .external_stop
                .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// Records the first error and stops the run.
    fn fail(&self, error: E) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert(error);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    fn lock_source(&self) -> Result<MutexGuard<'_, SourceSide<Src>>, WorkerPanicked> {
        self.source.lock().map_err(|_| WorkerPanicked)
    }

    /// The next item with its sequence number, once there is room for it;
    /// `None` when the source is exhausted or the run stops.
    fn take(&self) -> Result<Option<(u64, T)>, E> {
        let mut source = self.lock_source()?;
        loop {
            if self.stopped() || source.exhausted {
                return Ok(None);
            }
            let has_room = |source: &SourceSide<Src>| {
                source.next_sequence < self.written.load(Ordering::SeqCst) + self.in_flight
            };
            if has_room(&source) {
                break;
            }
            // The waiter is counted before `written` is read again, and the
            // deliverer reads the count after storing `written` (all
            // sequentially consistent): either this check sees the new
            // count, or the deliverer sees the waiter and wakes it, taking
            // the source lock first so that the wake-up cannot come before
            // the wait.
            self.waiters.fetch_add(1, Ordering::SeqCst);
            let waited = if has_room(&source) {
                Ok(source)
            } else {
                self.room
                    .wait_timeout(source, STOP_POLL)
                    .map(|(source, _)| source)
            };
            self.waiters.fetch_sub(1, Ordering::SeqCst);
            source = waited.map_err(|_| WorkerPanicked)?;
        }
        match (source.source)()? {
            Some(item) => {
                let sequence = source.next_sequence;
                source.next_sequence += 1;
                Ok(Some((sequence, item)))
            }
            None => {
                source.exhausted = true;
                Ok(None)
            }
        }
    }

    /// Files a finished (or abandoned) result and delivers every result
    /// whose turn has come.
    fn deliver(&self, sequence: u64, result: Option<R>) -> Result<(), E> {
        let mut output = self.output.lock().map_err(|_| WorkerPanicked)?;
        if result.is_none() {
            // Abandoned: nothing from here on is delivered.
            output.end = Some(output.end.map_or(sequence, |end| end.min(sequence)));
            self.stop.store(true, Ordering::SeqCst);
        }
        output.waiting.insert(sequence, result);
        let OutputSide {
            sink,
            waiting,
            next,
            delivered,
            end,
            stopped_by_sink,
        } = &mut *output;
        while let Some(result) = waiting.remove(next) {
            if end.is_none_or(|end| *next < end)
                && let Some(result) = result
            {
                *delivered += 1;
                if sink(result)? == Flow::Stop {
                    *end = Some(*next + 1);
                    *stopped_by_sink = true;
                    self.stop.store(true, Ordering::SeqCst);
                }
            }
            *next += 1;
        }
        self.written.store(*next, Ordering::SeqCst);
        drop(output);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            // Taking the lock orders this wake-up after the waiter's check.
            drop(self.lock_source()?);
            self.room.notify_all();
        }
        Ok(())
    }

    /// One worker's loop: take, work, deliver, until the source is
    /// exhausted or the run stops.
    fn work<W>(&self, state: &mut W, work: &impl Fn(&mut W, T) -> Option<R>) {
        loop {
            let (sequence, item) = match self.take() {
                Ok(Some(taken)) => taken,
                Ok(None) => return,
                Err(e) => return self.fail(e),
            };
            let result = work(state, item);
            if let Err(e) = self.deliver(sequence, result) {
                return self.fail(e);
            }
        }
    }
}

/// Stops the run if its worker panics, so that no other worker waits for
/// an item that will never be delivered.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[derive(Debug, PartialEq, Eq)]
    enum TestError {
        Panicked,
        Source(u64),
        Sink(u64),
    }

    impl From<WorkerPanicked> for TestError {
        fn from(_: WorkerPanicked) -> Self {
            TestError::Panicked
        }
    }

    /// A deterministic amount of busy work that varies by item, so that
    /// items finish out of order.
    fn spin(n: u64) -> u64 {
        let mut x = n;
        for _ in 0..(n * 7919 % 5000) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        x
    }

    fn squares(threads: usize, in_flight: usize, n: u64) -> (Vec<(u64, u64)>, Finished<u64>) {
        let mut items = 0..n;
        let mut out = Vec::new();
        let finished = OrderedMap::new(threads)
            .in_flight_per_thread(in_flight)
            .run(
                || Ok::<_, TestError>(items.next()),
                |_| 0u64,
                |done, i| {
                    *done += 1;
                    Some((i, spin(i)))
                },
                |r| {
                    out.push(r);
                    Ok(Flow::Continue)
                },
            )
            .unwrap();
        (out, finished)
    }

    #[test]
    fn results_come_in_source_order_for_any_threads_and_look_ahead() {
        let (reference, _) = squares(1, 4, 2000);
        assert_eq!(reference.len(), 2000);
        for threads in 1..=5 {
            for in_flight in [1, 2, 8] {
                let (out, finished) = squares(threads, in_flight, 2000);
                assert!(out == reference, "{threads} threads, {in_flight} in flight");
                assert!(finished.complete());
                assert_eq!(finished.delivered, 2000);
                assert_eq!(finished.workers.len(), threads);
                assert_eq!(finished.workers.iter().sum::<u64>(), 2000);
            }
        }
    }

    #[test]
    fn look_ahead_is_bounded() {
        let cut = AtomicU64::new(0);
        let delivered = AtomicU64::new(0);
        let most_ahead = AtomicU64::new(0);
        let mut items = 0..3000u64;
        OrderedMap::new(3)
            .in_flight_per_thread(2)
            .run(
                || {
                    let ahead =
                        cut.fetch_add(1, Ordering::SeqCst) - delivered.load(Ordering::SeqCst);
                    most_ahead.fetch_max(ahead, Ordering::SeqCst);
                    Ok::<_, TestError>(items.next())
                },
                |_| (),
                |_, i| Some(spin(i)),
                |_| {
                    delivered.fetch_add(1, Ordering::SeqCst);
                    Ok(Flow::Continue)
                },
            )
            .unwrap();
        assert!(most_ahead.load(Ordering::SeqCst) < 6, "{most_ahead:?}");
    }

    #[test]
    fn empty_source_and_errors() {
        let finished = OrderedMap::new(2)
            .run(
                || Ok::<Option<u64>, TestError>(None),
                |_| (),
                |_, i| Some(i),
                |_| Ok(Flow::Continue),
            )
            .unwrap();
        assert!(finished.complete() && finished.delivered == 0);

        let mut items = 0..1000u64;
        let source_error = OrderedMap::new(2).run(
            || match items.next() {
                Some(500) => Err(TestError::Source(500)),
                next => Ok(next),
            },
            |_| (),
            |_, i| Some(i),
            |_| Ok(Flow::Continue),
        );
        assert_eq!(source_error.unwrap_err(), TestError::Source(500));

        let mut items = 0..1000u64;
        let mut seen = Vec::new();
        let sink_error = OrderedMap::new(3).run(
            || Ok(items.next()),
            |_| (),
            |_, i| Some(i),
            |i| {
                seen.push(i);
                if i == 300 {
                    Err(TestError::Sink(i))
                } else {
                    Ok(Flow::Continue)
                }
            },
        );
        assert_eq!(sink_error.unwrap_err(), TestError::Sink(300));
        assert_eq!(seen, (0..=300).collect::<Vec<_>>());
    }

    #[test]
    fn abandoned_items_end_the_output_at_them() {
        for threads in 1..=4 {
            let mut items = 0..1000u64;
            let mut out = Vec::new();
            let finished = OrderedMap::new(threads)
                .run(
                    || Ok::<_, TestError>(items.next()),
                    |_| (),
                    |_, i| (i != 400 && i != 700).then(|| spin(i) ^ spin(i) ^ i),
                    |i| {
                        out.push(i);
                        Ok(Flow::Continue)
                    },
                )
                .unwrap();
            assert!(finished.interrupted && !finished.complete());
            assert_eq!(out, (0..400).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn the_sink_can_stop_the_run() {
        let mut items = 0..1_000_000u64;
        let mut out = Vec::new();
        let finished = OrderedMap::new(3)
            .run(
                || Ok::<_, TestError>(items.next()),
                |_| (),
                |_, i| Some(i),
                |i| {
                    out.push(i);
                    Ok(if i == 99 { Flow::Stop } else { Flow::Continue })
                },
            )
            .unwrap();
        assert!(finished.stopped_by_sink && !finished.interrupted);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn the_stop_flag_stops_cutting_and_delivers_a_prefix() {
        let stop = AtomicBool::new(false);
        let mut items = 0..u64::MAX;
        let mut out = Vec::new();
        let finished = OrderedMap::new(2)
            .stop_on(&stop)
            .run(
                || Ok::<_, TestError>(items.next()),
                |_| (),
                |_, i| {
                    if i == 5000 {
                        stop.store(true, Ordering::SeqCst);
                    }
                    Some(i)
                },
                |i| {
                    out.push(i);
                    Ok(Flow::Continue)
                },
            )
            .unwrap();
        assert!(finished.interrupted);
        assert!(out.len() > 5000);
        assert_eq!(out, (0..out.len() as u64).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_worker_fails_the_run() {
        let mut items = 0..1000u64;
        let result = OrderedMap::new(2).run(
            || Ok::<_, TestError>(items.next()),
            |_| (),
            |_, i| {
                assert!(i != 321, "worker panics on purpose");
                Some(i)
            },
            |_| Ok(Flow::Continue),
        );
        assert_eq!(result.unwrap_err(), TestError::Panicked);
    }
}
