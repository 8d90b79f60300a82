"""A procedurally generated room for active perception, with gymnasium's API (Sea²'s stand-in for
ReplicaCAD in Habitat)."""

from __future__ import annotations

import functools
import math
import numbers

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from statcore.compat import RenamedKeys
from statcore.validation import check_positive, check_positive_int, check_scalar, describe

#: The pose actions, by index.
ACTIONS = ("forward", "left", "right", "stop")
EMPTY, WALL, OCCLUDER = 0, 1, 2
#: Cell codes from here up hold an object; the class is ``code - FIRST_OBJECT``.
FIRST_OBJECT = 3
#: The info keys spelt the American way before the packages settled on "centre".
_INFO_RENAMES = {"center_class": "centre_class", "center_depth": "centre_depth"}
_CEILING = np.array([0.55, 0.55, 0.6])
_FLOOR = np.array([0.35, 0.3, 0.25])
_WALL = np.array([0.7, 0.7, 0.7])
_OCCLUDER = np.array([0.45, 0.3, 0.2])
_FOG = np.array([0.5, 0.5, 0.5])
# Classes come in pairs of one colour told apart only by their stripe frequency, so that a far
# (short, coarsely sampled) object is hard to name and approaching it helps the detector.
_HUES = np.array([[0.9, 0.2, 0.2], [0.2, 0.3, 0.9], [0.2, 0.8, 0.3], [0.9, 0.8, 0.2]])
_STEP = 0.05
# The camera's defaults, which the environment's own views use.
_VIEW_FOV, _VIEW_RANGE, _VIEW_FOG_DEPTH = math.pi / 3, 10.0, 6.0


def object_colour(cls):
    """The base colour and stripe count of object class ``cls`` (an int, or an int array: then
    one colour row and one count per entry)."""
    return _HUES[(cls // 2) % len(_HUES)], 2 + 3 * (cls % 2)


def render_view(
    grid, x, y, angle, *, size=16, fov=_VIEW_FOV, max_range=_VIEW_RANGE, fog=_VIEW_FOG_DEPTH
):
    """A ray-cast egocentric view of ``grid`` from ``(x, y)`` looking along ``angle``.

    Each image column casts one ray; the first non-empty cell it meets is drawn as a column whose
    height falls as ``1/depth``, fading into grey fog with depth, above a floor and below a
    ceiling. Objects carry horizontal stripes (:func:`object_colour`).

    Returns
    -------
    image : ndarray (3, size, size), float32 in [0, 1]
    hit_codes : ndarray (size,)
        The cell code each column's ray hit (``EMPTY`` past ``max_range``).
    depth : ndarray (size,)
        Each column's perpendicular depth.

    Raises
    ------
    ValueError, TypeError
        For a ``grid`` that is not a 2-D array of integer cell codes, a pose that is not a
        finite point inside the grid, or an impossible camera (``size``, ``fov``,
        ``max_range``, ``fog``).
    """
    grid = np.asarray(grid)
    if grid.ndim != 2 or grid.dtype.kind not in "iu" or 0 in grid.shape:
        raise TypeError(
            "`grid` must be a non-empty 2-D array of integer cell codes; got dtype "
            f"{grid.dtype}, shape {grid.shape}"
        )
    x = check_scalar(x, name="x", low=0.0, high=float(grid.shape[0]), high_inclusive=False)
    y = check_scalar(y, name="y", low=0.0, high=float(grid.shape[1]), high_inclusive=False)
    angle = check_scalar(angle, name="angle")
    size = check_positive_int(size, name="size")
    fov = check_scalar(fov, name="fov", low=0.0, high=2 * math.pi, low_inclusive=False)
    max_range = check_scalar(max_range, name="max_range", low=_STEP, low_inclusive=False)
    fog = check_positive(fog, name="fog")
    return _render(grid, x, y, angle, size, fov, max_range, fog)


@functools.lru_cache(maxsize=16)
def _camera(size: int, fov: float, max_range: float):
    offsets = np.linspace(-fov / 2, fov / 2, size)
    offsets.flags.writeable = False
    t = np.arange(_STEP, max_range, _STEP)
    t.flags.writeable = False
    return offsets, t


def _render(grid, x, y, angle, size, fov, max_range, fog):
    # render_view's work on checked arguments: the environment renders every step of every
    # rollout (about 100,000 views in the vignette), where the checks cost a fifth of the time.
    offsets, t = _camera(size, fov, max_range)
    rays = angle + offsets
    px = x + np.cos(rays)[:, None] * t
    py = y + np.sin(rays)[:, None] * t
    ix = np.clip(np.floor(px).astype(int), 0, grid.shape[0] - 1)
    iy = np.clip(np.floor(py).astype(int), 0, grid.shape[1] - 1)
    codes = grid[ix, iy]
    hit = codes != EMPTY
    first = np.where(hit.any(axis=1), hit.argmax(axis=1), len(t) - 1)
    hit_codes = codes[np.arange(size), first]
    depth = t[first] * np.cos(offsets)
    height = np.minimum(1.0, 0.9 / depth)
    rows = (np.arange(size) + 0.5) / size - 0.5
    inside = np.abs(rows)[:, None] < height[None, :] / 2
    u = (rows[:, None] + height[None, :] / 2) / height[None, :]
    is_object = hit_codes >= FIRST_OBJECT
    hue, stripes = object_colour(np.where(is_object, hit_codes - FIRST_OBJECT, 0))
    pattern = (np.sin(2 * np.pi * stripes[None, :] * u) > 0).astype(float)
    striped = hue[None, :, :] * (0.4 + 0.6 * pattern[:, :, None])
    plain = np.where((hit_codes == OCCLUDER)[:, None], _OCCLUDER, _WALL)
    colour = np.where(is_object[None, :, None], striped, plain[None, :, :])
    fade = np.exp(-depth / fog)[None, :, None]
    colour = colour * fade + _FOG * (1 - fade)
    background = np.where(rows[:, None, None] < 0, _CEILING, _FLOOR)
    image = np.where(inside[:, :, None], colour, background)
    return image.transpose(2, 0, 1).astype(np.float32), hit_codes, depth


class ActiveRoomEnv(gym.Env):
    """A room with objects, occluders and a nuisance region, seen through a small camera.

    Each room (an integer ``room`` seed) is a square of ``room_size × room_size`` cells inside a
    wall, holding ``n_objects`` objects of distinct classes (out of ``n_classes``) and
    ``n_occluders`` occluding blocks. A disc of radius ``nuisance_radius`` is the domain shift: a
    camera inside it sees a colour cast (channels rotated by ``nuisance`` of the way) and
    sensor noise, views a detector trained on clean renders has never seen.

    The agent's pose is a cell and one of ``n_headings`` headings; ``forward`` moves one cell
    along the heading (diagonally for diagonal headings) unless the cell is taken (a collision,
    the pose unchanged), ``left``/``right`` turn by one heading, ``stop`` ends the episode.

    Observations are ``{"image": (3, image_size, image_size) float32 in [0, 1], "pose": (x/L,
    y/L, cos θ, sin θ)}``. The environment's own reward is 0: in Sea² the reward is built from a
    frozen perception module's confidence (:class:`mlcore.active.PerceptionReward`). ``info``
    holds ground truth for evaluation only: ``centre_class`` (the object class whose cells
    cover most of the central half of the columns, -1 for none), ``centre_depth`` (of the
    centre column), ``collision``, ``in_nuisance``.

    Parameters
    ----------
    room_size : int
        Interior cells per side.
    n_classes, n_objects, n_occluders : int
    image_size : int
        Side of the square image.
    n_headings : int
        Headings, evenly spaced (8: turns of 45°).
    max_steps : int
        Steps before the episode is truncated.
    nuisance : float in [0, 1]
        Strength of the nuisance region's colour cast (0: no domain shift).
    nuisance_radius : float
        Its radius, in cells.

    Notes
    -----
    Fidelity: reconstruction. The paper's environment is ReplicaCAD in Habitat with RGB-D views;
    this ray-cast room keeps what the method needs (poses, occlusion, distance- and
    region-dependent perception quality) and none of the photorealism.
    """

    metadata = {"render_modes": ["rgb_array"]}
    action_names = ACTIONS

    def __init__(
        self,
        *,
        room_size: int = 7,
        n_classes: int = 4,
        n_objects: int = 3,
        n_occluders: int = 4,
        image_size: int = 16,
        n_headings: int = 8,
        max_steps: int = 16,
        nuisance: float = 0.7,
        nuisance_radius: float = 2.0,
    ):
        self.room_size = check_scalar(room_size, name="room_size", kind=numbers.Integral, low=3)
        self.n_classes = check_scalar(n_classes, name="n_classes", kind=numbers.Integral, low=1)
        self.n_objects = check_scalar(
            n_objects, name="n_objects", kind=numbers.Integral, low=1, high=n_classes
        )
        self.n_occluders = check_scalar(
            n_occluders, name="n_occluders", kind=numbers.Integral, low=0
        )
        if n_objects + n_occluders + 1 > room_size**2:
            raise ValueError(
                f"a {room_size}x{room_size} room cannot hold {n_objects} objects, "
                f"{n_occluders} occluders and the agent"
            )
        self.image_size = check_scalar(image_size, name="image_size", kind=numbers.Integral, low=4)
        self.n_headings = check_scalar(n_headings, name="n_headings", kind=numbers.Integral, low=3)
        self.max_steps = check_scalar(max_steps, name="max_steps", kind=numbers.Integral, low=1)
        self.nuisance = check_scalar(nuisance, name="nuisance", kind=numbers.Real, low=0, high=1)
        self.nuisance_radius = check_scalar(
            nuisance_radius, name="nuisance_radius", kind=numbers.Real, low=0
        )
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0.0, 1.0, (3, image_size, image_size), np.float32),
                "pose": spaces.Box(-1.0, 1.0, (4,), np.float32),
            }
        )
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.grid = None

    def config(self) -> dict:
        """The constructor's arguments (hashable values), to build an identical environment."""
        names = (
            "room_size",
            "n_classes",
            "n_objects",
            "n_occluders",
            "image_size",
            "n_headings",
            "max_steps",
            "nuisance",
            "nuisance_radius",
        )
        return {n: getattr(self, n) for n in names}

    def make_room(self, room: int):
        """Build room ``room`` (deterministic in the seed): grid, objects, nuisance centre."""
        room = check_scalar(room, name="room", kind=numbers.Integral, low=0)
        rng = np.random.default_rng(room)
        n = self.room_size
        grid = np.full((n + 2, n + 2), WALL, dtype=np.int64)
        grid[1:-1, 1:-1] = EMPTY
        cells = rng.permutation(n * n)[: self.n_objects + self.n_occluders]
        classes = rng.permutation(self.n_classes)[: self.n_objects]
        for k, c in enumerate(cells):
            i, j = 1 + c // n, 1 + c % n
            grid[i, j] = FIRST_OBJECT + classes[k] if k < self.n_objects else OCCLUDER
        self.grid = grid
        self.room = room
        self.classes = tuple(int(c) for c in classes)
        self.nuisance_centre = 1 + rng.uniform(0, n, size=2)

    def reset(self, *, seed=None, options=None):
        """Start an episode.

        Parameters
        ----------
        seed : int, optional
            Seeds the start pose, the query and the sensor noise (gymnasium's ``np_random``).
        options : dict, optional
            ``room`` (int seed of the room, default 0), ``query`` (an object class present in
            the room; default: one drawn from those present), ``pose`` (``(i, j, heading)`` on
            a free cell; default: drawn).
        """
        super().reset(seed=seed)
        options = {} if options is None else dict(options)
        unknown = set(options) - {"room", "query", "pose"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use room, query, pose")
        self.make_room(options.get("room", 0))
        query = options.get("query")
        if query is None:
            query = self.classes[self.np_random.integers(len(self.classes))]
        elif query not in self.classes:
            raise ValueError(
                f"`query` must be a class present in room {self.room} {self.classes}; got "
                f"{describe(query)}"
            )
        self.query = int(query)
        pose = options.get("pose")
        if pose is None:
            free = np.argwhere(self.grid == EMPTY)
            i, j = free[self.np_random.integers(len(free))]
            pose = (int(i), int(j), int(self.np_random.integers(self.n_headings)))
        i, j, h = pose
        if self.grid[i, j] != EMPTY:
            raise ValueError(f"`pose` {pose} is not on a free cell of room {self.room}")
        self.cell = (int(i), int(j))
        self.heading = int(h) % self.n_headings
        self.t = 0
        return self._observe(collision=False)

    @property
    def angle(self) -> float:
        return 2 * math.pi * self.heading / self.n_headings

    def step(self, action):
        """Take one pose action.

        Parameters
        ----------
        action : int
            An index into ``ACTIONS``: move forward one cell, turn left or right by one
            heading, or stop.

        Returns
        -------
        observation : dict
            ``image`` (the rendered view after the action) and ``pose`` (position and heading).
        reward : float
            Always 0: the reward comes from the frozen perception module, outside the room.
        terminated : bool
            Whether the action was ``stop``.
        truncated : bool
            Whether the episode reached ``max_steps``.
        info : dict
            Whether the move collided, whether the view lies in the nuisance region, the query
            and the room, and the ground truth at the view's centre (used only to evaluate).
        """
        if self.grid is None:
            raise RuntimeError("call `reset` before `step`")
        if not self.action_space.contains(action):
            raise ValueError(f"`action` must be an int in [0, {len(ACTIONS) - 1}]; got {action!r}")
        name = ACTIONS[int(action)]
        collision = False
        if name == "forward":
            di, dj = round(math.cos(self.angle)), round(math.sin(self.angle))
            target = (self.cell[0] + di, self.cell[1] + dj)
            if self.grid[target] == EMPTY:
                self.cell = target
            else:
                collision = True
        elif name in ("left", "right"):
            self.heading = (self.heading + (1 if name == "left" else -1)) % self.n_headings
        self.t += 1
        obs, info = self._observe(collision=collision)
        return obs, 0.0, name == "stop", self.t >= self.max_steps, info

    def _observe(self, *, collision: bool):
        x, y = self.cell[0] + 0.5, self.cell[1] + 0.5
        image, codes, depth = _render(
            self.grid, x, y, self.angle, self.image_size, _VIEW_FOV, _VIEW_RANGE, _VIEW_FOG_DEPTH
        )
        in_nuisance = bool(
            np.hypot(x - self.nuisance_centre[0], y - self.nuisance_centre[1])
            < self.nuisance_radius
        )
        if in_nuisance and self.nuisance > 0:
            cast = image[[2, 0, 1]]
            noise = self.np_random.normal(0.0, 0.1 * self.nuisance, size=image.shape)
            image = np.clip((1 - self.nuisance) * image + self.nuisance * cast + noise, 0, 1)
            image = image.astype(np.float32)
        band = codes[self.image_size // 4 : self.image_size - self.image_size // 4]
        objects = band[band >= FIRST_OBJECT]
        # The object in view is the one covering most of the central half of the columns (a
        # 1-cell object seen from a heading off by up to half a turn step still counts).
        code = np.bincount(objects).argmax() if objects.size else EMPTY
        centre = self.image_size // 2
        pose = np.array(
            [
                x / (self.room_size + 2),
                y / (self.room_size + 2),
                math.cos(self.angle),
                math.sin(self.angle),
            ],
            dtype=np.float32,
        )
        info = RenamedKeys(
            centre_class=int(code - FIRST_OBJECT) if code >= FIRST_OBJECT else -1,
            centre_depth=float(depth[centre]),
            collision=collision,
            in_nuisance=in_nuisance,
            query=self.query,
            room=self.room,
            renames=_INFO_RENAMES,
        )
        return {"image": image, "pose": pose}, info

    def render(self):
        return self._observe(collision=False)[0]["image"].transpose(1, 2, 0)


def check_pose_env(env, *, name: str = "env"):
    """Check that ``env`` has the observation and action spaces Sea²'s components read.

    They are a gymnasium ``Dict`` observation space with ``"image"`` (a ``Box`` of shape
    ``(3, H, W)``) and ``"pose"`` (a ``Box`` of shape ``(4,)``: x, y, cos θ, sin θ), a
    ``Discrete`` action space (with ``action_names`` when its actions are not ``ACTIONS``),
    an int ``max_steps``, and ``reset(options={"room": ..., "query": ...})`` setting
    ``env.query``. Returns ``env``.
    """
    space = getattr(env, "observation_space", None)
    if not isinstance(space, spaces.Dict) or not {"image", "pose"} <= set(space.spaces):
        raise ValueError(
            f"`{name}` must have a gymnasium Dict observation space with keys 'image' and "
            f"'pose'; got {space!r}"
        )
    image, pose = space["image"], space["pose"]
    if not isinstance(image, spaces.Box) or len(image.shape) != 3 or image.shape[0] != 3:
        raise ValueError(
            f"`{name}.observation_space['image']` must be a Box of shape (3, H, W); got {image!r}"
        )
    if not isinstance(pose, spaces.Box) or pose.shape != (4,):
        raise ValueError(
            f"`{name}.observation_space['pose']` must be a Box of shape (4,) (x, y, cos, sin); "
            f"got {pose!r}"
        )
    max_steps = getattr(env, "max_steps", None)
    if not isinstance(max_steps, numbers.Integral) or max_steps < 1:
        raise ValueError(
            f"`{name}.max_steps` must be a positive int (the episode length); got "
            f"{describe(max_steps)}"
        )
    if not isinstance(getattr(env, "action_space", None), spaces.Discrete):
        raise ValueError(
            f"`{name}.action_space` must be gymnasium Discrete; got {env.action_space!r}"
        )
    return env
