//! BBR's windowed max filter of the bandwidth (Kathleen Nichols' algorithm, Linux
//! `lib/win_minmax.c` `minmax_running_max`): the best three samples of the window, in rounds.

/// One sample of the running max: value `v` at round `t`.
#[derive(Clone, Copy, Debug, Default)]
struct MinmaxSample {
    t: u64,
    v: f64,
}

/// Windowed running max over rounds (Linux `lib/win_minmax.c`, `minmax_running_max`): the
/// best, second and third best samples, spread over the window.
#[derive(Clone, Debug, Default)]
pub(super) struct MaxFilter {
    s: [MinmaxSample; 3],
}

impl MaxFilter {
    pub(super) fn get(&self) -> f64 {
        self.s[0].v
    }

    pub(super) fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [MinmaxSample { t, v }; 3];
        v
    }

    /// Take `v`, measured in round `t`, with a window of `win` rounds.
    pub(super) fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = MinmaxSample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        // As time passes, promote the second and third choices (`minmax_subwin_update`).
        let dt = t.saturating_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}
