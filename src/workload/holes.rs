//! Which hole of a request's template each generated piece fills.

/// Hole indices the templates use.
/// The key's digits: the hole a template encodes ahead for each key width.
pub(super) const HOLE_KEY: usize = crate::resp::KEY_HOLE;
pub(super) const HOLE_DATA: usize = 1;
pub(super) const HOLE_EXPIRY: usize = 2;
pub(super) const HOLE_TAG: usize = 3;
/// `__rand_1st__` .. `__rand_9th__`.
pub(super) const HOLE_SHARED: usize = 4;
/// Each `__rand_int__` occurrence of a command, in order.
pub(super) const HOLE_RAND_INT: usize = HOLE_SHARED + 9;
/// `__rand_int__` occurrences allowed in one command.
pub const MAX_RAND_INTS: usize = 16;
/// The SCAN cursor (`--scan-incremental-iteration`).
pub(super) const HOLE_CURSOR: usize = HOLE_RAND_INT + MAX_RAND_INTS;
/// Each [`ArgPart::Between`](crate::config::ArgPart::Between) of a command, in order.
pub(super) const HOLE_BETWEEN: usize = HOLE_CURSOR + 1;
/// `Between` draws allowed in one command (WAIT has two).
pub(super) const MAX_BETWEEN: usize = 4;
pub(super) const HOLES: usize = HOLE_BETWEEN + MAX_BETWEEN;
/// Key `i` of a multi-key command is hole `HOLE_MULTI + i`, filled from the generator's scratch.
pub(super) const HOLE_MULTI: usize = HOLES;
/// Column `c` of the dataset's row (`__field:NAME__`) is hole `HOLE_FIELD + c`: far above the
/// multi-key holes, filled from the row the request takes.
pub(super) const HOLE_FIELD: usize = 1 << 20;
/// A pub/sub message's stamp ([`ArgPart::Stamp`](crate::config::ArgPart)), just below the
/// dataset's columns.
pub(super) const HOLE_STAMP: usize = HOLE_FIELD - 1;
/// `__field__` and `__member__` (`config::arguments::Space` in order), just below the stamp.
pub(super) const HOLE_ELEMENT: usize = HOLE_STAMP - 2;
