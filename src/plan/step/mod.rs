//! The closed set of changes hyraid makes. [`Step::commands`] is the single source of what runs:
//! the shell renderer prints it and the executor runs it. Each kind of step is a struct in the
//! room of the object it changes (`disk`, `md`, `boot`, `lvm`), with its commands, its symbol,
//! its object and its summary together ([`StepKind`]).

mod boot;
mod cache;
mod command;
mod disk;
mod fs;
mod fs_label;
mod loader;
mod luks;
mod luks_keys;
mod lvm;
mod md;
mod md_size;
mod md_width;
mod partition;
mod pvmove;
mod unit;

pub use boot::{RegenerateInitramfs, ReloadUdev, WriteFile};
pub use cache::{AttachCache, DetachCache, SetCacheMode};
pub use command::{Command, PASSPHRASE_FUNCTION, command_line, quote, wait_path};
pub use disk::{CacheTool, CreatePartitions, NewPartition, SetWriteCache, WipeSignatures};
pub use fs::{FS_BLOCK_SIZE, FsOn, GrowFilesystem, MakeFilesystem, MountFilesystem, ShrinkLv};
pub use fs_label::RelabelFilesystem;
pub use loader::{
    CreateBootEntry, DeleteBootEntry, InstallBiosLoader, InstallEfiLoader, MakeEsp,
    SetGrubPcDevices, WriteGrubConfig, WriteHook, esp_mount,
};
pub use luks::{
    BackupLuksHeader, CreateKeyFile, CryptOn, FormatLuks, OpenLuks, RANDOM_KEY_PBKDF, ResizeLuks,
};
pub use luks_keys::{AddLuksKey, EnrollTpm2, RemoveLuksKey, TestLuksKey};
pub use lvm::{
    AttachWritecache, CreateCachevol, CreateLv, CreatePv, CreateVg, DeactivateLv, DetachWritecache,
    ExtendLv, ExtendVg, RemoveLv, RemoveVg, SetWritecacheSettings, SizeArg,
};
pub use md::{
    AddBitmap, AddMember, ArrayDevice, CreateArray, ReAddMember, ReadWrite, RemoveBitmap,
    RemoveFailed, ReplaceMember, SetWriteBehind, SetWriteMostly, StartArray, StopArray, WaitIdle,
    chunk_arg,
};
pub use md_size::GrowArraySize;
pub use md_width::{GrowArray, RemoveMember, ZeroSuperblock};
pub use partition::{GrowPartition, RegisterPartitions, ResizePv, partx_add};
pub use pvmove::{MovePv, ReducePv, RemovePvLabel, ResumeMove, WaitMove};
pub use unit::{DisableUnits, EnableUnits, RestartUnit};

use super::address::Address;
use serde::{Deserialize, Serialize};

/// How a step can affect data and redundancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    Safe,
    /// Redundancy is reduced for a while (resync, recovery, a window without bitmap).
    Degrades,
    /// Acknowledged writes depend on a single device for a while (writecache on a
    /// non-redundant PV, write-behind).
    DataAtRisk,
    /// Destroys what is on a device; needs --allow-destroy.
    Destroys,
}

impl Risk {
    pub fn label(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Degrades => "degrades",
            Risk::DataAtRisk => "data-at-risk",
            Risk::Destroys => "destroys",
        }
    }
}

/// What every kind of step tells about itself.
pub trait StepKind {
    /// The exact commands, in order.
    fn commands(&self) -> Vec<Command>;
    /// `+` create, `~` change, `-` remove.
    fn symbol(&self) -> char;
    /// The object the step changes.
    fn object(&self) -> Address;
    /// Short description of the change.
    fn summary(&self) -> String;
}

/// One change. Saved plans name the kind in `op` beside the struct's fields. [`StepKindName`]
/// is the vocabulary itself, every kind by its `op` (the crash matrix iterates it, so that a new
/// kind is interrupted at each of its commands or the test names it as uncovered).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::EnumDiscriminants)]
#[serde(tag = "op", rename_all = "snake_case")]
#[strum_discriminants(
    name(StepKindName),
    derive(strum::EnumIter, strum::IntoStaticStr, Hash, PartialOrd, Ord),
    strum(serialize_all = "snake_case")
)]
pub enum Step {
    SetWriteCache(SetWriteCache),
    WipeSignatures(WipeSignatures),
    CreateArray(CreateArray),
    WriteFile(WriteFile),
    RegenerateInitramfs(RegenerateInitramfs),
    ReloadUdev(ReloadUdev),
    WaitIdle(WaitIdle),
    ReadWrite(ReadWrite),
    AddMember(AddMember),
    ReAddMember(ReAddMember),
    ReplaceMember(ReplaceMember),
    RemoveFailed(RemoveFailed),
    CreatePartitions(CreatePartitions),
    StartArray(StartArray),
    SetWriteMostly(SetWriteMostly),
    SetWriteBehind(SetWriteBehind),
    RemoveBitmap(RemoveBitmap),
    AddBitmap(AddBitmap),
    CreatePv(CreatePv),
    CreateVg(CreateVg),
    ExtendVg(ExtendVg),
    CreateLv(CreateLv),
    ExtendLv(ExtendLv),
    CreateCachevol(CreateCachevol),
    DeactivateLv(DeactivateLv),
    AttachWritecache(AttachWritecache),
    SetWritecacheSettings(SetWritecacheSettings),
    DetachWritecache(DetachWritecache),
    RemoveLv(RemoveLv),
    RemoveVg(RemoveVg),
    AttachCache(AttachCache),
    SetCacheMode(SetCacheMode),
    DetachCache(DetachCache),
    StopArray(StopArray),
    GrowArray(GrowArray),
    RemoveMember(RemoveMember),
    MovePv(MovePv),
    ResumeMove(ResumeMove),
    WaitMove(WaitMove),
    ReducePv(ReducePv),
    RemovePvLabel(RemovePvLabel),
    MakeFilesystem(MakeFilesystem),
    MountFilesystem(MountFilesystem),
    GrowFilesystem(GrowFilesystem),
    ShrinkLv(ShrinkLv),
    RegisterPartitions(RegisterPartitions),
    GrowPartition(GrowPartition),
    ResizePv(ResizePv),
    ZeroSuperblock(ZeroSuperblock),
    RelabelFilesystem(RelabelFilesystem),
    GrowArraySize(GrowArraySize),
    EnableUnits(EnableUnits),
    DisableUnits(DisableUnits),
    RestartUnit(RestartUnit),
    CreateKeyFile(CreateKeyFile),
    FormatLuks(FormatLuks),
    BackupLuksHeader(BackupLuksHeader),
    OpenLuks(OpenLuks),
    ResizeLuks(ResizeLuks),
    AddLuksKey(AddLuksKey),
    TestLuksKey(TestLuksKey),
    RemoveLuksKey(RemoveLuksKey),
    EnrollTpm2(EnrollTpm2),
    MakeEsp(MakeEsp),
    InstallEfiLoader(InstallEfiLoader),
    InstallBiosLoader(InstallBiosLoader),
    CreateBootEntry(CreateBootEntry),
    DeleteBootEntry(DeleteBootEntry),
    WriteHook(WriteHook),
    SetGrubPcDevices(SetGrubPcDevices),
    WriteGrubConfig(WriteGrubConfig),
}

impl Step {
    /// The kind's name, as `op` in a saved plan.
    pub fn kind_name(&self) -> &'static str {
        StepKindName::from(self).into()
    }

    /// The step's kind, for the behaviour every kind has.
    fn kind(&self) -> &dyn StepKind {
        match self {
            Step::SetWriteCache(s) => s,
            Step::WipeSignatures(s) => s,
            Step::CreateArray(s) => s,
            Step::WriteFile(s) => s,
            Step::RegenerateInitramfs(s) => s,
            Step::ReloadUdev(s) => s,
            Step::WaitIdle(s) => s,
            Step::ReadWrite(s) => s,
            Step::AddMember(s) => s,
            Step::ReAddMember(s) => s,
            Step::ReplaceMember(s) => s,
            Step::RemoveFailed(s) => s,
            Step::CreatePartitions(s) => s,
            Step::StartArray(s) => s,
            Step::SetWriteMostly(s) => s,
            Step::SetWriteBehind(s) => s,
            Step::RemoveBitmap(s) => s,
            Step::AddBitmap(s) => s,
            Step::CreatePv(s) => s,
            Step::CreateVg(s) => s,
            Step::ExtendVg(s) => s,
            Step::CreateLv(s) => s,
            Step::ExtendLv(s) => s,
            Step::CreateCachevol(s) => s,
            Step::DeactivateLv(s) => s,
            Step::AttachWritecache(s) => s,
            Step::SetWritecacheSettings(s) => s,
            Step::DetachWritecache(s) => s,
            Step::RemoveLv(s) => s,
            Step::RemoveVg(s) => s,
            Step::AttachCache(s) => s,
            Step::SetCacheMode(s) => s,
            Step::DetachCache(s) => s,
            Step::StopArray(s) => s,
            Step::GrowArray(s) => s,
            Step::RemoveMember(s) => s,
            Step::MovePv(s) => s,
            Step::ResumeMove(s) => s,
            Step::WaitMove(s) => s,
            Step::ReducePv(s) => s,
            Step::RemovePvLabel(s) => s,
            Step::MakeFilesystem(s) => s,
            Step::MountFilesystem(s) => s,
            Step::GrowFilesystem(s) => s,
            Step::ShrinkLv(s) => s,
            Step::RegisterPartitions(s) => s,
            Step::GrowPartition(s) => s,
            Step::ResizePv(s) => s,
            Step::ZeroSuperblock(s) => s,
            Step::RelabelFilesystem(s) => s,
            Step::GrowArraySize(s) => s,
            Step::EnableUnits(s) => s,
            Step::DisableUnits(s) => s,
            Step::RestartUnit(s) => s,
            Step::CreateKeyFile(s) => s,
            Step::FormatLuks(s) => s,
            Step::BackupLuksHeader(s) => s,
            Step::OpenLuks(s) => s,
            Step::ResizeLuks(s) => s,
            Step::AddLuksKey(s) => s,
            Step::TestLuksKey(s) => s,
            Step::RemoveLuksKey(s) => s,
            Step::EnrollTpm2(s) => s,
            Step::MakeEsp(s) => s,
            Step::InstallEfiLoader(s) => s,
            Step::InstallBiosLoader(s) => s,
            Step::CreateBootEntry(s) => s,
            Step::DeleteBootEntry(s) => s,
            Step::WriteHook(s) => s,
            Step::SetGrubPcDevices(s) => s,
            Step::WriteGrubConfig(s) => s,
        }
    }

    /// The exact commands, in order.
    pub fn commands(&self) -> Vec<Command> {
        self.kind().commands()
    }

    /// `+` create, `~` change, `-` remove.
    pub fn symbol(&self) -> char {
        self.kind().symbol()
    }

    /// The object the step changes.
    pub fn object(&self) -> Address {
        self.kind().object()
    }

    /// Short description of the change.
    pub fn summary(&self) -> String {
        self.kind().summary()
    }
}
