//! Why shards' results cannot be merged into one.

message_error!(
    /// Results that do not belong together, or a part of one that does not read.
    MergeError from crate::report::document::Malformed
);
