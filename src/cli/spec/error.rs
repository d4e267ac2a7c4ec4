//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// A specification that cannot be read or planned, or a server step that failed; the
    /// message names which.
    SpecError from crate::cli::options::error::OptionsError, crate::report::document::Malformed, crate::cli::ab::AbError
);
