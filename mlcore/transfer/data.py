"""Sensor data for XTransfer: a synthetic IMU-like activity generator and BasicMotions.

The generator is an IMU-like stand-in (six activities of sinusoid, AR and burst patterns,
per-user gain and phase shifts, three axes); BasicMotions is the UEA smart-watch set shipped
as ``mlcore/transfer/basic_motions.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from statcore.validation import check_positive, check_positive_int, check_random_state

IMU_CLASSES = ("walking", "running", "standing", "cycling", "jumping", "falling")
BASIC_MOTIONS_FILE = "basic_motions.csv"
BASIC_MOTIONS_CHANNELS = ("acc_x", "acc_y", "acc_z", "gyr_x", "gyr_y", "gyr_z")


@dataclass(frozen=True, eq=False)
class SensorDomain:
    """Labelled multichannel sensor windows.

    Parameters
    ----------
    X : ndarray (n, channels, length), float32
    y : ndarray (n,), int64
        Class indices into ``classnames``.
    classnames : tuple of str
    groups : ndarray (n,)
        The user (synthetic data) or the archive's train/test split (BasicMotions) of each
        window: split on it to test across users.
    fs : float
        Sampling rate in Hz.
    name : str
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    classnames: tuple
    groups: np.ndarray = field(repr=False)
    fs: float
    name: str

    def subset(self, idx) -> SensorDomain:
        """The windows ``idx`` (indices or a boolean mask), as a new domain."""
        idx = np.asarray(idx)
        return SensorDomain(
            X=self.X[idx].copy(),
            y=self.y[idx].copy(),
            classnames=self.classnames,
            groups=self.groups[idx].copy(),
            fs=self.fs,
            name=self.name,
        )

    def few_shot(self, shots: int, *, random_state=0) -> tuple[np.ndarray, np.ndarray]:
        """Indices of ``shots`` windows per class (drawn without replacement) and the rest."""
        shots = check_positive_int(shots, name="shots")
        rng = check_random_state(random_state)
        chosen = []
        for c in range(len(self.classnames)):
            members = np.flatnonzero(self.y == c)
            if members.size < shots:
                raise ValueError(
                    f"`shots`={shots} but class {self.classnames[c]!r} has {members.size} windows"
                )
            chosen.append(rng.choice(members, size=shots, replace=False))
        chosen = np.sort(np.concatenate(chosen))
        return chosen, np.setdiff1d(np.arange(len(self.y)), chosen)


def _ar1(rng, n, phi, sd):
    """An AR(1) path of length ``n`` started from its stationary law."""
    e = rng.normal(0.0, sd, n)
    out = np.empty(n)
    out[0] = e[0] / np.sqrt(1 - phi**2)
    for t in range(1, n):
        out[t] = phi * out[t - 1] + e[t]
    return out


def _activity(rng, c, t, phase, fscale):
    """Three axes (3, len(t)) of activity ``c`` before the user's gain and the sensor noise."""
    n = t.size
    w = 2 * np.pi * fscale
    axes = np.zeros((3, n))
    if c == 0:  # walking: a 2 Hz gait with its harmonic, out of phase across axes
        for k in range(3):
            axes[k] = np.sin(w * 2.0 * t + phase + k * 2.1) + 0.4 * np.sin(w * 4.0 * t + phase)
    elif c == 1:  # running: a faster, larger gait
        for k in range(3):
            axes[k] = 1.8 * np.sin(w * 3.5 * t + phase + k * 1.3)
    elif c == 2:  # standing: gravity on one axis plus slow sway
        for k in range(3):
            axes[k] = _ar1(rng, n, 0.95, 0.08)
        axes[2] += 1.0
    elif c == 3:  # cycling: a slow pedal cycle on two axes, in quadrature
        axes[0] = np.sin(w * 1.2 * t + phase)
        axes[1] = np.cos(w * 1.2 * t + phase)
        axes[2] = 0.3 * _ar1(rng, n, 0.8, 0.3)
    elif c == 4:  # jumping: a periodic train of short bursts
        period = 1.0 / (1.5 * fscale)
        pos = ((t + phase / w) % period) / period
        burst = np.exp(-(((pos - 0.5) / 0.06) ** 2))
        axes[:] = 2.0 * burst
        axes[0] *= 0.5
    else:  # falling: one large burst at a random time, then lying still
        t0 = rng.uniform(0.2, 0.8) * t[-1]
        burst = 3.0 * np.exp(-(((t - t0) / 0.12) ** 2))
        for k in range(3):
            axes[k] = burst * (1 - 0.3 * k) + _ar1(rng, n, 0.9, 0.05)
        axes[0] += np.where(t > t0, 1.0, 0.0)
    return axes


def synthetic_imu(
    n_per_class: int = 20,
    *,
    n_users: int = 6,
    length: int = 128,
    fs: float = 32.0,
    noise: float = 0.3,
    user_shift: float = 1.0,
    random_state=0,
) -> SensorDomain:
    """Synthetic three-axis IMU windows of six activities, with per-user gain and phase shifts.

    The classes are ``walking`` and ``running`` (sinusoids with harmonics, phase-shifted across
    axes), ``standing`` (AR(1) sway around gravity), ``cycling`` (slow quadrature sinusoids),
    ``jumping`` (a train of bursts) and ``falling`` (one burst, then stillness).
    Each user ``u`` has a per-axis gain ``exp(N(0, 0.3·user_shift))``, a frequency scale
    ``1 + U(-0.1, 0.1)·user_shift`` and an axis offset ``N(0, 0.3·user_shift)``; each window a
    random phase. Gaussian sensor noise of sd ``noise`` is added.

    Parameters
    ----------
    n_per_class : int
        Windows per class (spread evenly over the users, the remainder to the first users).
    n_users : int
    length : int
        Samples per window.
    fs : float
        Sampling rate (Hz).
    noise : float
        Sensor noise sd.
    user_shift : float
        Scales the per-user differences (0: every user alike).
    random_state : None, int or numpy Generator

    Returns
    -------
    SensorDomain
        ``X`` (6·n_per_class, 3, length) float32, ``groups`` the user of each window.

    Notes
    -----
    Fidelity: a synthetic stand-in for the paper's sensing sets (six classes of sinusoid, AR
    and burst patterns with per-user gain and phase shifts); the patterns and their constants
    are ours.

    Examples
    --------
    >>> d = synthetic_imu(4, random_state=0)
    >>> d.X.shape, d.classnames[0]
    ((24, 3, 128), 'walking')
    """
    n_per_class = check_positive_int(n_per_class, name="n_per_class")
    n_users = check_positive_int(n_users, name="n_users")
    length = check_positive_int(length, name="length", minimum=16)
    fs = check_positive(fs, name="fs")
    noise = check_positive(noise, name="noise", strict=False)
    user_shift = check_positive(user_shift, name="user_shift", strict=False)
    rng = check_random_state(random_state)
    gains = np.exp(rng.normal(0.0, 0.3 * user_shift, (n_users, 3)))
    fscales = 1.0 + rng.uniform(-0.1, 0.1, n_users) * user_shift
    offsets = rng.normal(0.0, 0.3 * user_shift, (n_users, 3))
    t = np.arange(length) / fs
    X, y, users = [], [], []
    for c in range(len(IMU_CLASSES)):
        for i in range(n_per_class):
            u = i % n_users
            axes = _activity(rng, c, t, rng.uniform(0, 2 * np.pi), fscales[u])
            axes = gains[u][:, None] * axes + offsets[u][:, None]
            X.append(axes + rng.normal(0.0, noise, axes.shape))
            y.append(c)
            users.append(u)
    return SensorDomain(
        X=np.asarray(X, dtype=np.float32),
        y=np.asarray(y, dtype=np.int64),
        classnames=IMU_CLASSES,
        groups=np.asarray(users, dtype=np.int64),
        fs=float(fs),
        name="synthetic IMU",
    )


def basic_motions() -> SensorDomain:
    """UEA BasicMotions: 80 smart-watch windows (3-D accelerometer and gyroscope, 10 Hz, 10 s).

    Four students performed four activities (standing, walking, running, badminton) five times
    each while wearing a smart watch. The archive's 40/40 train/test split is ``groups``
    (0 train, 1 test).

    Returns
    -------
    SensorDomain
        ``X`` (80, 6, 100) float32, channels ``acc_x, acc_y, acc_z, gyr_x, gyr_y, gyr_z``;
        ``classnames`` ``("Standing", "Walking", "Running", "Badminton")``.

    Notes
    -----
    Read from ``mlcore/transfer/basic_motions.csv`` (long format: ``case, split, activity,
    t, acc_x, acc_y, acc_z, gyr_x, gyr_y, gyr_z``; 8000 rows), converted without changing a
    value from the ``BasicMotions_TRAIN.ts`` / ``_TEST.ts`` files that aeon 1.6.0
    (BSD-3-Clause) ships; its sha256 is
    ``ffbff855ad2acafcd7711f92029c5af6ce9c796feb42dd3d98de0cc8e2df52f3``.

    References
    ----------
    Bagnall, Dau, Lines, Flynn, Large, Bostrom, Southam and Keogh (2018). The UEA multivariate
    time series classification archive, 2018. arXiv:1811.00075.
    """
    import pandas as pd

    ref = resources.files("mlcore.transfer").joinpath(BASIC_MOTIONS_FILE)
    with resources.as_file(ref) as path:
        df = pd.read_csv(path)
    classnames = ("Standing", "Walking", "Running", "Badminton")
    df = df.sort_values(["case", "t"])
    n_cases = df["case"].nunique()
    X = df[list(BASIC_MOTIONS_CHANNELS)].to_numpy(np.float32).reshape(n_cases, -1, 6)
    first = df.groupby("case", sort=True).first()
    y = first["activity"].map({c: k for k, c in enumerate(classnames)}).to_numpy(np.int64)
    return SensorDomain(
        X=np.ascontiguousarray(X.transpose(0, 2, 1)),
        y=y,
        classnames=classnames,
        groups=(first["split"] == "test").to_numpy(np.int64),
        fs=10.0,
        name="BasicMotions",
    )
