//! Delta checkpoints, on the run's side: the state's JSON as last written, kept up to date
//! with each step's changes, so that a step writes what it changed without serializing the
//! whole state (see `checkpoint::delta`).

use std::sync::Arc;

use super::Run;
use super::algo::{self, Updates};
use crate::checkpoint::{CheckpointRef, StateChanges, StateDelta};
use crate::errors::RunError;
use crate::state::GraphState;

/// The state's JSON as the run last wrote it, with what changed since.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// The committed state's JSON, when known without serializing the state: `None` before the
    /// run's first checkpoint, after a change its state could not describe, and in a run with
    /// no store or whose states are written whole.
    json: Option<Arc<serde_json::Value>>,
    /// What changed since the last checkpoint.
    changes: StateChanges,
    /// Checkpoints written as deltas since the last whole one.
    deltas: u32,
    /// The state said it cannot tell what a step changed (a `WholeState`, a hand-written
    /// `GraphState`): every checkpoint of the run is whole.
    untold: bool,
    /// For a run started on a thread, before its first checkpoint: the checkpoint of the run
    /// before whose state it went on from, which its first checkpoint's changes follow.
    from: Option<CheckpointRef>,
    /// The JSON the state was read from when the run was restored, until the run's next
    /// checkpoint or change outside a step: what a resume's claim writes, so that a state just
    /// read is not serialized again. With it in debug builds, the state's own JSON then, to
    /// check that nothing changed it since.
    read: Option<(Arc<serde_json::Value>, Option<serde_json::Value>)>,
}

impl Written {
    /// Forgets the state's JSON after a change that did not say what it changed: the next
    /// checkpoint holds the whole state.
    pub(super) fn forget(&mut self) {
        self.read = None;
        self.json = None;
        self.changes = StateChanges::default();
        self.from = None;
    }

    /// A run on a thread goes on from checkpoint `from` of the run before, whose state is
    /// `json` (read by folding `chain` deltas): its first checkpoint can be the changes since.
    pub(super) fn go_on_from(
        &mut self,
        from: CheckpointRef,
        json: Arc<serde_json::Value>,
        chain: u32,
    ) {
        self.json = json.is_object().then_some(json);
        self.changes = StateChanges::default();
        self.deltas = chain;
        self.from = Some(from);
    }

    /// A run restored from a checkpoint whose state, `state`, was read from `json`.
    pub(super) fn read_from<S: GraphState>(json: Arc<serde_json::Value>, state: &S) -> Self {
        let own = cfg!(debug_assertions)
            .then(|| serde_json::to_value(state).ok())
            .flatten();
        Written {
            read: Some((json, own)),
            ..Written::default()
        }
    }

    fn knows(&self) -> bool {
        self.json.is_some()
    }

    /// Folds a step's `changes` into the JSON; forgets it when they do not fit.
    fn take_in(&mut self, changes: StateChanges) {
        let Some(json) = &mut self.json else { return };
        if changes.apply_to(Arc::make_mut(json)).is_err() {
            self.forget();
            return;
        }
        self.changes.then(changes);
    }

    /// The next checkpoint's state as the changes since checkpoint `base`, with the whole JSON
    /// it makes, unless this one must be whole: the run's first, the first after the JSON was
    /// forgotten, and one in `every`.
    fn delta(&mut self, base: u64, every: u32) -> Option<(Arc<serde_json::Value>, StateDelta)> {
        // A run's first checkpoint follows the run before's, on a thread; else none.
        let (base, run) = match self.from.take() {
            Some(from) if base == 0 => (from.checkpoint, Some(from.run_id)),
            _ => (base, None),
        };
        let json = self
            .json
            .as_ref()
            .filter(|_| base > 0 && self.deltas + 1 < every)?;
        let json = Arc::clone(json);
        self.deltas += 1;
        let changes = std::mem::take(&mut self.changes);
        Some((json, StateDelta { base, run, changes }))
    }

    /// After a whole checkpoint of `json`: deltas follow it when `deltas` (the run has a store
    /// and writes deltas) and the state is an object that says what its steps change.
    fn whole(&mut self, json: &Arc<serde_json::Value>, deltas: bool) {
        self.json = (deltas && !self.untold && json.is_object()).then(|| Arc::clone(json));
        self.changes = StateChanges::default();
        self.deltas = 0;
    }
}

impl<S: GraphState> Run<S> {
    /// Merges a step's updates into the state (see [`algo::merge`]), keeping the written JSON
    /// up to date when the run writes deltas.
    #[inline]
    pub(super) fn merge(
        &mut self,
        updates: Updates<'_, S::Update>,
        step: u64,
    ) -> Result<(), RunError> {
        if !self.ledger.written.knows() || matches!(updates, Updates::None) {
            return algo::merge(&mut self.state, updates, step);
        }
        let copies = updates.to_vec();
        algo::merge(&mut self.state, updates, step)?;
        match self.state.changes(&copies) {
            Ok(Some(changes)) => self.ledger.written.take_in(changes),
            Ok(None) => {
                self.ledger.written.forget();
                self.ledger.written.untold = true;
            }
            // Written whole next, where an unwritable state fails the run as it always has.
            Err(_) => self.ledger.written.forget(),
        }
        Ok(())
    }

    /// The state a checkpoint about to be written holds, with the changes since the one
    /// before when it can be a delta.
    pub(super) fn state_to_write(
        &mut self,
    ) -> Result<(Arc<serde_json::Value>, Option<Arc<StateDelta>>), RunError> {
        // Every change of the state is saved before a claim can read it (a step's merge at the
        // step's end, an edit or an answer through `forget`): forgotten here, the JSON read
        // costs the steps' merges nothing.
        self.ledger.written.read = None;
        let every = self.graph.snapshot_every;
        if let Some((json, delta)) = self.ledger.written.delta(self.ledger.checkpoints, every) {
            if cfg!(debug_assertions) {
                self.check_written(&*self.state_json()?);
            }
            return Ok((json, Some(Arc::new(delta))));
        }
        let json = self.state_json()?;
        self.check_written(&json);
        let deltas = self.writes_deltas();
        self.ledger.written.whole(&json, deltas);
        Ok((json, None))
    }

    /// The state as JSON, as [`state_json`](Self::state_json) makes it: the JSON it was read
    /// from while nothing has changed it since (checked against a fresh one in debug builds).
    ///
    /// The JSON read may differ from what the state writes now (a field the state type has
    /// added since, with a default): a claim changes the run's status, not its state, and the
    /// checkpoint after it writes the state whole.
    pub(super) fn state_json_as_read(&self) -> Result<Arc<serde_json::Value>, RunError> {
        let Some((read, own)) = &self.ledger.written.read else {
            return self.state_json();
        };
        if let Some(own) = own {
            assert_eq!(
                *own,
                *self.state_json()?,
                "the state changed since it was read, and the JSON it was read from was kept"
            );
        }
        Ok(Arc::clone(read))
    }

    /// Whether the run writes deltas, and so works out what each of its steps changed: when it
    /// has a store that writes them and `snapshot_every` leaves room for one. Debug builds do
    /// for a store that keeps whole states too (which ignores them), so that every test on
    /// every store checks `GraphState::changes`.
    pub(super) fn writes_deltas(&self) -> bool {
        self.graph.snapshot_every > 1
            && self
                .graph
                .checkpointer
                .as_ref()
                .is_some_and(|store| store.writes_deltas() || cfg!(debug_assertions))
    }

    /// In debug builds (at every checkpoint written), that the JSON kept up to date by the
    /// steps' changes is the state's own: a state whose `changes` missed a change would
    /// otherwise store wrong deltas. Every test of every graph checks it so.
    fn check_written(&self, fresh: &serde_json::Value) {
        if cfg!(debug_assertions)
            && let Some(kept) = &self.ledger.written.json
        {
            assert_eq!(
                **kept,
                *fresh,
                "the state's JSON kept from its changes differs from the state's own: `GraphState::changes` of `{}` missed a change",
                std::any::type_name::<S>()
            );
        }
    }
}
