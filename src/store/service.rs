//! One background thread of the store (flush, dispatch, cleanup, pre-fault, page release): a
//! name, a stop flag its loop polls, a wake-up and a join when the store closes. Each service
//! keeps its own file with its own `start` and `stop` (Java's `ServiceThread` subclasses); this
//! is the skeleton they share.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use crate::store::StoreInner;

/// A running service loop `run(inner, stop)`; it must return soon after `stop` turns true.
pub struct ServiceThread {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl ServiceThread {
    pub(crate) fn spawn(
        name: &str,
        inner: Arc<StoreInner>,
        run: fn(Arc<StoreInner>, Arc<AtomicBool>),
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || run(inner, s))?;
        Ok(Self {
            stop,
            handle: Some(handle),
        })
    }

    /// `spawn` for a loop that sleeps on an [`IdleWaker`] of `inner` (picked by `waker`): the
    /// thread is registered there, so that work published for it wakes it.
    pub(crate) fn spawn_woken_by(
        name: &str,
        inner: Arc<StoreInner>,
        waker: fn(&StoreInner) -> &IdleWaker,
        run: fn(Arc<StoreInner>, Arc<AtomicBool>),
    ) -> std::io::Result<Self> {
        let service = Self::spawn(name, Arc::clone(&inner), run)?;
        if let Some(h) = &service.handle {
            waker(&inner).register(h.thread());
        }
        Ok(service)
    }

    /// Raises the stop flag, wakes the thread from its park and waits for the loop to return.
    pub fn stop(&mut self) {
        self.stop_and_wake(|| {});
    }

    /// `stop` for a loop that waits elsewhere than in a park: `wake` reaches it there, after the
    /// flag is raised.
    pub(crate) fn stop_and_wake(&mut self, wake: impl FnOnce()) {
        self.stop.store(true, Ordering::Release);
        wake();
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// The loop of a service that works on a period: until the stop flag is raised, parks up to
/// `period` (the stop's unpark ends the park early) and runs `tick`, once more after that
/// wake-up.
pub(crate) fn run_every(stop: &AtomicBool, period: Duration, mut tick: impl FnMut()) {
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(period);
        tick();
    }
}

/// Tells the first failure of a retried operation, and its recovery, apart from the retries in
/// between: a disk that went read-only is logged when it starts failing and when it works again,
/// not on every pass (a poisoned broker must not fill its log).
#[derive(Default)]
pub(crate) struct FailureLatch(AtomicBool);

impl FailureLatch {
    /// Records a failure; true when it starts a streak (log it then).
    pub(crate) fn failed(&self) -> bool {
        !self.0.swap(true, Ordering::AcqRel)
    }

    /// Records a success; true when it ends a streak (log the recovery then).
    pub(crate) fn succeeded(&self) -> bool {
        self.0.load(Ordering::Relaxed) && self.0.swap(false, Ordering::AcqRel)
    }
}

/// Lets other threads wake a service thread that sleeps while it has nothing to do, instead of
/// the thread polling. Both sides fence (a Dekker pair: the waker publishes its work then reads
/// the idle flag; the sleeper raises the flag then re-checks for work), so a wake-up is never
/// missed. The unpark happens at most once per idle spell; a waker that finds the thread awake
/// costs one fence and one relaxed load.
#[derive(Default)]
pub(crate) struct IdleWaker {
    idle: AtomicBool,
    thread: OnceLock<Thread>,
}

impl IdleWaker {
    /// The thread to unpark. Until this is set, wakers cannot wake it: it finds work at the
    /// end of its current sleep.
    pub(crate) fn register(&self, thread: &Thread) {
        let _ = self.thread.set(thread.clone());
    }

    /// Called after publishing work for the thread.
    pub(crate) fn wake(&self) {
        self.wake_if(|| true);
    }

    /// `wake` when `due` (read after the fence: the condition the sleeper published before its
    /// own fence is seen).
    pub(crate) fn wake_if(&self, due: impl FnOnce() -> bool) {
        fence(Ordering::SeqCst);
        if due() && self.idle.load(Ordering::Relaxed) && self.idle.swap(false, Ordering::AcqRel) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }

    /// The service thread, idle: sleeps up to `timeout` unless `more` (re-checked after
    /// announcing the sleep, so work published in between is seen either here or by its `wake`).
    pub(crate) fn sleep_unless(&self, timeout: Duration, more: impl Fn() -> bool) {
        self.idle.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !more() {
            std::thread::park_timeout(timeout);
        }
        self.idle.store(false, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_wake_reaches_a_long_sleep_and_work_published_before_the_sleep_is_seen() {
        let waker = Arc::new(IdleWaker::default());
        let work = Arc::new(AtomicBool::new(true));
        let (w, flag) = (Arc::clone(&waker), Arc::clone(&work));
        let t0 = Instant::now();
        let sleeper = std::thread::spawn(move || {
            // Work already published: no sleep at all.
            w.sleep_unless(Duration::from_secs(30), || {
                flag.swap(false, Ordering::AcqRel)
            });
            let first = t0.elapsed();
            // No work: sleeps until woken.
            while !flag.load(Ordering::Acquire) {
                w.sleep_unless(Duration::from_secs(30), || flag.load(Ordering::Acquire));
            }
            first
        });
        waker.register(sleeper.thread());
        std::thread::sleep(Duration::from_millis(50));
        work.store(true, Ordering::Release);
        waker.wake();
        let first = sleeper.join().unwrap();
        assert!(
            first < Duration::from_secs(5),
            "published work was slept over"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the wake-up was missed"
        );
    }
}
