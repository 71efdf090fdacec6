//! One background thread of the store (flush, dispatch, cleanup, pre-fault, page release): a
//! name, a stop flag its loop polls between `park_timeout`s, and a join when the store closes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};

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

    /// The thread, to unpark it (`None` once stopped).
    pub(crate) fn thread(&self) -> Option<&Thread> {
        self.handle.as_ref().map(JoinHandle::thread)
    }

    /// Raises the stop flag without waiting (for a loop woken by something else than unpark).
    pub(crate) fn signal_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Raises the stop flag, wakes the thread from its park and waits for the loop to return.
    pub fn stop(&mut self) {
        self.signal_stop();
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
