//! A multi-producer multi-consumer channel for the model builds, with the part of
//! `crossbeam-channel`'s API the crate uses.
//!
//! Written by hand because neither checker can see inside `crossbeam-channel`, and
//! `loom::sync::mpsc` cannot serve (its receiver is not cloneable and `recv` never reports
//! a disconnect). A `Mutex<VecDeque>` with two condition variables. `bounded(0)` (a
//! rendezvous channel in crossbeam) holds one message here: no caller relies on the
//! hand-off.

use std::collections::VecDeque;
use std::time::Duration;

pub use crossbeam_channel::{RecvError, RecvTimeoutError, SendError, TryRecvError};

use super::model::{Arc, Condvar, Mutex, thread};

#[derive(Debug)]
struct State<T> {
    queue: VecDeque<T>,
    capacity: Option<usize>,
    senders: usize,
    receivers: usize,
}

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
}

/// The sending half; cloneable. The channel disconnects when the last sender is dropped.
#[derive(Debug)]
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half; cloneable.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// A channel that holds at most `capacity` messages (at least one, see the module docs).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    with_capacity(Some(capacity.max(1)))
}

/// A channel without a bound.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    with_capacity(None)
}

fn with_capacity<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            capacity,
            senders: 1,
            receivers: 1,
        }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    });
    (
        Sender {
            shared: Arc::clone(&shared),
        },
        Receiver { shared },
    )
}

impl<T> Sender<T> {
    /// Sends `message`, blocking while a bounded channel is full. Fails when every
    /// receiver is gone.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        let mut state = self.shared.state.lock();
        loop {
            if state.receivers == 0 {
                return Err(SendError(message));
            }
            if state.capacity.is_none_or(|cap| state.queue.len() < cap) {
                state.queue.push_back(message);
                self.shared.not_empty.notify_one();
                return Ok(());
            }
            self.shared.not_full.wait(&mut state);
        }
    }
}

impl<T> Receiver<T> {
    /// Blocks until a message arrives; fails when the channel is empty and every sender is
    /// gone.
    pub fn recv(&self) -> Result<T, RecvError> {
        let mut state = self.shared.state.lock();
        loop {
            if let Some(message) = state.queue.pop_front() {
                self.shared.not_full.notify_one();
                return Ok(message);
            }
            if state.senders == 0 {
                return Err(RecvError);
            }
            self.shared.not_empty.wait(&mut state);
        }
    }

    /// Takes a message if one is queued.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut state = self.shared.state.lock();
        match state.queue.pop_front() {
            Some(message) => {
                self.shared.not_full.notify_one();
                Ok(message)
            }
            None if state.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Time is not modelled: takes a message if one is queued, otherwise yields and reports
    /// a timeout at once. Callers loop, as they would after a spurious wakeup.
    pub fn recv_timeout(&self, _timeout: Duration) -> Result<T, RecvTimeoutError> {
        match self.try_recv() {
            Ok(message) => Ok(message),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {
                thread::yield_now();
                Err(RecvTimeoutError::Timeout)
            }
        }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.state.lock().senders += 1;
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.shared.state.lock().receivers += 1;
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock();
        state.senders -= 1;
        if state.senders == 0 {
            self.shared.not_empty.notify_all();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock();
        state.receivers -= 1;
        if state.receivers == 0 {
            self.shared.not_full.notify_all();
        }
    }
}
