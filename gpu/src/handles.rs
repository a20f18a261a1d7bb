//! Handles of a backend's instances: handle `h` names instance `i` of upload `u`; a batch of N
//! instances takes N consecutive handles. Shared by the rig and linear-head stages.

/// `(upload, instance)` per handle, in handle order.
#[derive(Debug, Default)]
pub(crate) struct Handles {
    map: Vec<(u32, u32)>,
    /// What a handle names, for messages (`rig`, `head`).
    kind: &'static str,
}

impl Handles {
    pub(crate) fn new(kind: &'static str) -> Self {
        Handles {
            map: Vec::new(),
            kind,
        }
    }

    /// Handles given out.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// `(upload, instance)` of handle `h`.
    ///
    /// # Errors
    /// [`mien_core::Error::Invalid`] for a handle this backend never gave out.
    pub(crate) fn find(&self, h: u32) -> mien_core::Result<(usize, usize)> {
        let &(u, i) = self
            .map
            .get(h as usize)
            .ok_or_else(|| mien_core::Error::Invalid {
                what: format!("{} handle", self.kind),
                reason: format!("{h} was not uploaded to this backend"),
            })?;
        Ok((u as usize, i as usize))
    }

    /// Check that upload number `upload` of `instances` instances can be given handles (before
    /// anything is uploaded).
    ///
    /// # Errors
    /// 0 instances; more handles or uploads than a `u32` counts.
    pub(crate) fn check(&self, upload: usize, instances: u32) -> mien_core::Result<()> {
        if instances == 0 {
            return Err(mien_core::Error::Invalid {
                what: format!("{} batch", self.kind),
                reason: "0 instances: a batch needs at least one".into(),
            });
        }
        let found = self.map.len() as u64 + u64::from(instances);
        if u32::try_from(upload).is_err() || found > u64::from(u32::MAX) {
            return Err(mien_core::Error::Limit {
                what: format!("{}s in one backend", self.kind),
                limit: u64::from(u32::MAX),
                found,
            });
        }
        Ok(())
    }

    /// Give handles to the `instances` instances of upload number `upload` (checked by
    /// [`Handles::check`]); returns them in instance order.
    pub(crate) fn add(&mut self, upload: usize, instances: u32) -> Vec<u32> {
        let first = self.map.len() as u32;
        self.map.extend((0..instances).map(|i| (upload as u32, i)));
        (first..first + instances).collect()
    }
}

/// The binding limit a stage plans its uploads under: the device's, or a lower one given by
/// `with_binding_limit` (clamped to 256 bytes up to the device's) so the split paths run on small
/// models; its name for errors says which.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BindingLimit {
    /// Bytes.
    pub(crate) bytes: u64,
    /// The limit's name in errors.
    pub(crate) name: &'static str,
}

impl BindingLimit {
    /// The device's limit, or `bytes` when given and lower (at least 256).
    pub(crate) fn new(caps: &crate::device::Caps, bytes: Option<u64>) -> Self {
        let device = caps.binding_limit;
        match bytes.map(|b| b.clamp(256, device.max(256))) {
            Some(b) if b < device => BindingLimit {
                bytes: b,
                name: "the binding size given to with_binding_limit",
            },
            _ => BindingLimit {
                bytes: device,
                name: caps.binding_limit_name,
            },
        }
    }
}
