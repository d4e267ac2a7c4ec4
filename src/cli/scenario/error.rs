//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// A scenario file that cannot be read or planned, or a plan that cannot be saved as one;
    /// the message names the file, line and key.
    ScenarioError from crate::cli::options::error::OptionsError
);
