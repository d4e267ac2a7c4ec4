//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// Why a fill stopped: the server's memory could not be read, or a pass failed.
    FillError
);
