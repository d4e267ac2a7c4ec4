//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// A side that cannot be planned, rounds that could not run, or results that cannot be
    /// compared; the message names the side or the file.
    AbError from crate::cli::options::error::OptionsError, crate::cli::scenario::ScenarioError
);
