//! What goes wrong reading a role, as one type the role's files share.

message_error!(
    /// A `--role` that cannot be run as written: the line names the role and the fix.
    RoleError
);
