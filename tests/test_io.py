"""load_image on good images of every mode and on a corpus of hostile files."""

import io
import struct
import warnings

import numpy as np
import pytest
from PIL import Image

import eigenvision as ev


def _save(img: Image.Image, path, **kwargs):
    img.save(path, **kwargs)
    return path


@pytest.fixture
def gradient():
    return (np.arange(12 * 16, dtype=np.uint8).reshape(12, 16) * 1).astype(np.uint8)


def test_grey_png_round_trip(tmp_path, gradient):
    path = _save(Image.fromarray(gradient, "L"), tmp_path / "g.png")
    out = ev.load_image(path)
    assert out.dtype == np.float32 and out.shape == (12, 16)
    np.testing.assert_allclose(out, gradient / 255.0, atol=1e-7)


def test_pgm_matches_numpy_reading(tmp_path, gradient):
    path = tmp_path / "g.pgm"
    path.write_bytes(b"P5\n16 12\n255\n" + gradient.tobytes())
    np.testing.assert_allclose(ev.load_image(path), gradient / 255.0, atol=1e-7)


def test_rgb_luma_and_colour(tmp_path, rng):
    rgb = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    path = _save(Image.fromarray(rgb, "RGB"), tmp_path / "c.png")
    grey = ev.load_image(path)
    expected = (rgb / 255.0) @ np.array([0.299, 0.587, 0.114])
    np.testing.assert_allclose(grey, expected, atol=1e-6)
    colour = ev.load_image(path, as_gray=False)
    assert colour.shape == (5, 7, 3) and colour.dtype == np.float32
    np.testing.assert_allclose(colour, rgb / 255.0, atol=1e-7)


def test_rgba_composited_on_white(tmp_path):
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[..., 0] = 255  # red
    rgba[0, 0, 3] = 0  # transparent -> white
    rgba[0, 1, 3] = 255  # opaque red
    rgba[1, :, 3] = 128
    path = _save(Image.fromarray(rgba, "RGBA"), tmp_path / "a.png")
    out = ev.load_image(path, as_gray=False)
    np.testing.assert_allclose(out[0, 0], [1, 1, 1], atol=1e-6)
    np.testing.assert_allclose(out[0, 1], [1, 0, 0], atol=1e-6)
    a = 128 / 255
    np.testing.assert_allclose(out[1, 0], [1, 1 - a, 1 - a], atol=1e-6)


def test_palette_gif_gives_grey_values_not_indices(tmp_path):
    palette = [0, 0, 0] * 256
    palette[3 * 1 : 3 * 1 + 3] = [200, 200, 200]  # index 1 is light grey
    palette[3 * 2 : 3 * 2 + 3] = [50, 50, 50]
    img = Image.fromarray(np.array([[1, 2], [2, 1]], np.uint8), "P")
    img.putpalette(palette)
    path = _save(img, tmp_path / "p.gif")
    out = ev.load_image(path)
    np.testing.assert_allclose(out, [[200 / 255, 50 / 255], [50 / 255, 200 / 255]], atol=1e-6)


def test_16_bit_png_rescaled_not_clipped(tmp_path):
    values = np.array([[0, 1000], [40000, 65535]], dtype=np.uint16)
    path = _save(Image.fromarray(values), tmp_path / "16.png")
    out = ev.load_image(path)
    np.testing.assert_allclose(out, values / 65535.0, atol=1e-7)
    assert len(np.unique(out)) == 4


def test_float_tiff_and_bilevel(tmp_path):
    values = np.array([[0.0, 0.25], [0.5, 1.0]], np.float32)
    path = _save(Image.fromarray(values, "F"), tmp_path / "f.tif")
    np.testing.assert_allclose(ev.load_image(path), values)
    big = np.array([[-2.0, 2.0]], np.float32)
    path = _save(Image.fromarray(big, "F"), tmp_path / "big.tif")
    np.testing.assert_allclose(ev.load_image(path), [[0.0, 1.0]])
    bits = Image.fromarray(np.array([[0, 255]], np.uint8)).convert("1")
    path = _save(bits, tmp_path / "b.png")
    np.testing.assert_allclose(ev.load_image(path), [[0.0, 1.0]])


def test_exif_orientation_applied(tmp_path):
    data = np.zeros((10, 20), np.uint8)
    data[:, :5] = 255  # a bright band on the left of a landscape image
    img = Image.fromarray(data, "L").convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW to display
    path = tmp_path / "r.jpg"
    img.save(path, exif=exif, quality=100)
    out = ev.load_image(path)
    assert out.shape == (20, 10)
    assert out[:5].mean() > 0.9 and out[-5:].mean() < 0.1  # band now at the top


def test_file_object_is_accepted(gradient):
    buffer = io.BytesIO()
    Image.fromarray(gradient).save(buffer, format="PNG")
    buffer.seek(0)
    assert ev.load_image(buffer).shape == (12, 16)


def _png_bytes(shape=(64, 64)):
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, shape, dtype=np.uint8)).save(
        buffer, format="PNG"
    )
    return buffer.getvalue()


def _jpeg_bytes():
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64), dtype=np.uint8)).save(
        buffer, format="JPEG"
    )
    return buffer.getvalue()


def _huge_png_header():
    # A valid-looking PNG whose IHDR declares 100000 x 100000 pixels.
    import zlib

    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(bytes(1000)))
        + chunk(b"IEND", b"")
    )


HOSTILE = {
    "empty.png": (b"", "empty"),
    "random.png": (np.random.default_rng(1).bytes(500), "identify"),
    "text.jpg": (b"hello, I am not an image\n" * 10, "identify"),
    "truncated.png": (_png_bytes()[:200], "decode"),
    "truncated.jpg": (_jpeg_bytes()[:300], "decode"),
    "truncated.pgm": (b"P5\n64 64\n255\n" + bytes(100), "decode"),
    "corrupt_header.pgm": (b"P5\n-3 x\n255\n" + bytes(100), "identify|decode|corrupt"),
    "bomb.png": (_huge_png_header(), "decompression bomb"),
    "bomb.pgm": (b"P5\n100000 100000\n255\n" + bytes(64), "decompression bomb"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_raise_image_load_error(tmp_path, name):
    content, reason = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(content)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may leak as a warning either
        with pytest.raises(ev.ImageLoadError, match=reason) as info:
            ev.load_image(path)
    assert name in str(info.value)


def test_missing_and_folder(tmp_path):
    with pytest.raises(ev.ImageLoadError, match="not found"):
        ev.load_image(tmp_path / "nope.png")
    with pytest.raises(ev.ImageLoadError, match="folder"):
        ev.load_image(tmp_path)


def test_pixel_limit_is_configurable(tmp_path, gradient):
    path = _save(Image.fromarray(gradient), tmp_path / "g.png")
    with pytest.raises(ev.ImageLoadError, match="max_pixels"):
        ev.load_image(path, max_pixels=100)
    assert ev.load_image(path, max_pixels=12 * 16).shape == (12, 16)


def test_image_load_error_is_an_eigenvision_error():
    assert issubclass(ev.ImageLoadError, ev.EigenvisionError)


# ---------------------------------------------------------------- image sets


def _write_set(root, sizes=None):
    rng = np.random.default_rng(0)
    for label in ("alice", "bob"):
        (root / label).mkdir(parents=True)
        for i in (1, 2, 10):
            shape = (sizes or {}).get((label, i), (6, 5))
            Image.fromarray(rng.integers(0, 255, shape, dtype=np.uint8)).save(
                root / label / f"{i}.png"
            )
    (root / "README.txt").write_text("not an image")
    (root / "bob" / "notes.md").write_text("also not an image")


def test_load_image_set_labels_names_order(tmp_path):
    _write_set(tmp_path)
    with pytest.warns(UserWarning, match="not images"):
        images = ev.load_image_set(tmp_path)
    assert images.images.shape == (6, 6, 5) and images.images.dtype == np.float32
    assert images.labels.tolist() == ["alice"] * 3 + ["bob"] * 3
    assert images.names.tolist()[:3] == ["alice/1.png", "alice/2.png", "alice/10.png"]


def test_load_image_set_reports_every_bad_file(tmp_path):
    _write_set(tmp_path)
    (tmp_path / "alice" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    (tmp_path / "bob" / "empty.jpg").write_bytes(b"")
    with pytest.warns(UserWarning), pytest.raises(ev.ImageSetError) as info:
        ev.load_image_set(tmp_path)
    assert "broken.png" in str(info.value) and "empty.jpg" in str(info.value)
    assert "2 unreadable" in str(info.value)
    with pytest.warns(UserWarning):
        images = ev.load_image_set(tmp_path, on_error="skip")
    assert len(images) == 6


def test_load_image_set_mixed_sizes(tmp_path):
    _write_set(tmp_path, sizes={("bob", 2): (8, 8)})
    with pytest.warns(UserWarning), pytest.raises(ev.ImageSetError, match="size="):
        ev.load_image_set(tmp_path)
    with pytest.warns(UserWarning):
        images = ev.load_image_set(tmp_path, size=(4, 4))
    assert images.images.shape == (6, 4, 4)


def test_load_image_set_empty_folder(tmp_path):
    with pytest.raises(ev.ImageSetError, match="no images"):
        ev.load_image_set(tmp_path)


def test_imageset_indexing_and_split():
    images = np.arange(12 * 4, dtype=np.float32).reshape(12, 2, 2)
    labels = np.repeat(["a", "b", "c"], 4)
    names = np.array([f"{lab}/{i}.png" for lab in "abc" for i in (1, 2, 3, 10)])
    s = ev.ImageSet(images, labels, names, landmarks={"p": np.zeros((12, 2))})
    sub = s[s.labels == "b"]
    assert len(sub) == 4 and sub.landmarks["p"].shape == (4, 2)
    assert len(s[[0, 5]]) == 2 and len(s[3]) == 1
    train, test = s.split(2, order="name")
    assert train.names.tolist() == [
        "a/1.png",
        "a/2.png",
        "b/1.png",
        "b/2.png",
        "c/1.png",
        "c/2.png",
    ]
    assert len(test) == 6
    first, second = s.split(0.5, seed=3), s.split(0.5, seed=3)
    assert first[0].names.tolist() == second[0].names.tolist()
    assert set(first[0].names) | set(first[1].names) == set(names)
    with pytest.raises(ValueError, match="fewer than"):
        s.split(5)
    with pytest.raises(ev.ImageSetError, match="labels"):
        ev.ImageSet(images, labels[:3])


def test_load_image_zip_reads_labels_and_refuses_hostile_zips(rng, tmp_path):
    import io
    import zipfile

    def png():
        buffer = io.BytesIO()
        Image.fromarray((rng.random((6, 5)) * 255).astype(np.uint8)).save(buffer, format="PNG")
        return buffer.getvalue()

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("alice/1.png", png())
        archive.writestr("bob/2.png", png())
        archive.writestr("../escape.png", png())  # leaves the archive: ignored
        archive.writestr("loose.png", png())  # no label folder: ignored
        archive.writestr("bob/notes.txt", b"not an image")
    images = ev.io.load_image_zip(data.getvalue())
    assert images.labels.tolist() == ["alice", "bob"] and images.images.shape == (2, 6, 5)
    with pytest.raises(ev.ImageSetError, match="not a zip"):
        ev.io.load_image_zip(b"plain bytes")
    junk = io.BytesIO()
    with zipfile.ZipFile(junk, "w") as archive:
        archive.writestr("a/readme.txt", b"x")
    with pytest.raises(ev.ImageSetError, match="no images"):
        ev.io.load_image_zip(junk.getvalue())
    with pytest.raises(ev.ImageSetError, match="at most 1 "):
        ev.io.load_image_zip(data.getvalue(), max_files=1)


def test_loads_in_threads_change_no_process_wide_setting(tmp_path, gradient):
    """Regression: _decode set Image.MAX_IMAGE_PIXELS to None and back around every load;
    with 4 threads 641 of 800 loads failed and the bomb check was left off for the process."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "g.png"
    Image.fromarray((gradient * 255).astype(np.uint8)).save(path)
    before = Image.MAX_IMAGE_PIXELS

    def load(_):
        return ev.load_image(path, max_pixels=gradient.size)

    with ThreadPoolExecutor(4) as pool:
        images = list(pool.map(load, range(400)))
    assert all(np.array_equal(image, images[0]) for image in images)
    assert Image.MAX_IMAGE_PIXELS == before
    with pytest.raises(ev.ImageLoadError, match="max_pixels"):  # our limit still applies
        ev.load_image(path, max_pixels=gradient.size - 1)


def _png_bytes(array):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def _zip(members):
    import zipfile

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
    return bytearray(data.getvalue())


def _patch_member(raw, name, local_offset, central_offset, value, size):
    """Overwrite a field of ``name``'s local and central headers (little-endian)."""
    encoded = name.encode()
    local = raw.find(b"PK\x03\x04")
    central = raw.find(b"PK\x01\x02")
    raw[local + local_offset : local + local_offset + size] = value.to_bytes(size, "little")
    raw[central + central_offset : central + central_offset + size] = value.to_bytes(size, "little")
    assert encoded in raw
    return bytes(raw)


def test_hostile_zip_members_are_image_set_errors(rng):
    """Regression: encrypted, bad-CRC and method-99 members escaped as zipfile's own errors,
    long label names as OSError, and two members flattening to one file overwrote each other."""
    image = _png_bytes((rng.random((6, 5)) * 255).astype(np.uint8))
    encrypted = _patch_member(_zip({"a/1.png": image}), "a/1.png", 6, 8, 0x1, 2)
    method_99 = _patch_member(_zip({"a/1.png": image}), "a/1.png", 8, 10, 99, 2)
    bad_crc = bytearray(_zip({"a/1.png": image}))
    bad_crc[bad_crc.find(b"IHDR") + 6] ^= 0xFF  # a data byte: the stored CRC no longer matches
    for data, match in (
        (encrypted, "encrypted|password"),
        (method_99, "compress"),
        (bytes(bad_crc), "CRC"),
    ):
        with pytest.raises(ev.ImageSetError, match=match):
            ev.io.load_image_zip(data)
    collide = _zip({"x/alice/1.png": image, "y/alice/1.png": image})
    with pytest.raises(ev.ImageSetError, match="rename one"):
        ev.io.load_image_zip(bytes(collide))
    long_label = "é" * 200  # 400 bytes: longer than a file name may be
    images = ev.io.load_image_zip(
        bytes(_zip({f"{long_label}/1.png": image, "b/10.png": image, "b/2.png": image}))
    )
    assert images.labels.tolist() == ["b", "b", long_label]
    assert images.names.tolist() == ["b/2.png", "b/10.png", f"{long_label}/1.png"]


def test_total_pixel_budget_is_checked_from_headers(tmp_path):
    """Regression: 12 PNGs of 9000 x 9000 (0.94 MB) reached 4.2 GB; now refused from the
    headers before anything is decoded, unless size= shrinks them as they are read."""
    folder = tmp_path / "people" / "a"
    folder.mkdir(parents=True)
    for i in range(4):
        Image.new("L", (9000, 8000)).save(folder / f"{i}.png")  # 288M pixels in all
    with pytest.raises(ev.ImageSetError, match="max_total_pixels"):
        ev.load_image_set(tmp_path / "people")
    small = ev.load_image_set(tmp_path / "people", size=(9, 8))
    assert small.images.shape == (4, 9, 8)
    with pytest.raises(ValueError, match="size"):
        ev.load_image_set(tmp_path / "people", size=(10**6, 10**6))


def test_max_side_decodes_reduced_and_matches_a_resize(tmp_path, rng):
    """A JPEG decoded reduced (Pillow's draft) and resized equals the full decode resized."""
    smooth = np.add.outer(np.linspace(0, 200, 900), np.linspace(0, 55, 1200))
    path = tmp_path / "photo.jpg"
    Image.fromarray(smooth.astype(np.uint8)).save(path, quality=95)
    small = ev.load_image(path, max_side=300)
    assert small.shape == (225, 300) and small.flags.writeable
    reference = ev.transform.resize(ev.load_image(path), (225, 300))
    assert np.abs(small - reference).max() < 0.02  # a smooth picture: decoding scale barely shows
    assert ev.load_image(path, max_side=5000).shape == (900, 1200)  # never enlarged


def test_load_photos_keeps_each_photos_size_and_colour(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for label, size in (("ann", (60, 40)), ("ann", (30, 50)), ("bob", (2000, 1000))):
        folder = tmp_path / label
        folder.mkdir(exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (*size, 3), dtype=np.uint8)).save(
            folder / f"{len(list(folder.iterdir()))}.png"
        )
    (tmp_path / "bob" / "broken.jpg").write_bytes(b"not a photo")
    with pytest.raises(ev.ImageSetError, match="broken.jpg"):
        ev.load_photos(tmp_path)
    with pytest.warns(ev.UnreadableFilesWarning, match="left out 1 unreadable") as caught:
        photos, labels, names = ev.load_photos(tmp_path, on_error="skip", max_side=500)
    # Regression: the warning gave a Python list's repr; it names the file once, and holds it
    (warning,) = [w.message for w in caught if isinstance(w.message, ev.UnreadableFilesWarning)]
    assert str(warning).count("broken.jpg") == 1 and "['" not in str(warning)
    assert warning.files == (str(tmp_path / "bob" / "broken.jpg"),)
    assert [p.shape for p in photos] == [(60, 40, 3), (30, 50, 3), (500, 250, 3)]
    assert labels.tolist() == ["ann", "ann", "bob"] and names[2] == "bob/0.png"
    with pytest.raises(ev.ImageSetError, match="not a folder"):
        ev.load_photos(tmp_path / "ann" / "0.png")


@pytest.mark.parametrize("max_pixels", [float("nan"), "abc", 0, 2.5, True])
def test_load_image_refuses_a_max_pixels_that_is_no_count(tmp_path, max_pixels):
    """Regression (hardening round 4): ``load_image(max_pixels=nan | 'abc')`` failed inside
    ``int()`` or was taken."""
    path = tmp_path / "grey.png"
    Image.fromarray(np.zeros((4, 4), np.uint8)).save(path)
    with pytest.raises(ValueError, match="load_image: max_pixels must be an int"):
        ev.load_image(path, max_pixels=max_pixels)


def _zip_with_broken_members():
    """A zip of one good PNG and three members zipfile cannot unpack: a corrupt deflate stream,
    an encrypted member, and one compressed by a method it lacks (deflate64)."""
    import zipfile

    png = io.BytesIO()
    Image.fromarray(np.full((8, 8), 200, np.uint8)).save(png, format="PNG")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("good.png", "corrupt.png", "encrypted.png", "deflate64.png"):
            archive.writestr(name, png.getvalue())
    data = bytearray(buffer.getvalue())
    directory = data.find(b"PK\x01\x02")
    for name in ("corrupt.png", "encrypted.png", "deflate64.png"):
        local = data.find(name.encode(), 0, directory) - 30  # this member's local header
        central = data.find(name.encode(), directory) - 46  # and its central directory entry
        # the general-purpose flags sit at +6 (local) / +8 (central), the method at +8 / +10
        for flags, method in ((local + 6, local + 8), (central + 8, central + 10)):
            if name == "encrypted.png":
                data[flags] |= 0x01
            if name == "deflate64.png":
                data[method : method + 2] = (9).to_bytes(2, "little")
        if name == "corrupt.png":  # garble the compressed stream after the local header
            start = local + 30 + len(name)
            data[start : start + 8] = b"\xff" * 8
    return bytes(data)


def test_read_zip_images_names_members_it_cannot_unpack():
    """Regression (hardening round 4): the app's Group page read zips itself and crashed on a
    corrupt (BadZipFile / zlib.error), encrypted (RuntimeError) or deflate64-compressed
    (NotImplementedError) member; the library's reader names each and reads the rest."""
    data = _zip_with_broken_members()
    told = {}
    images = ev.io.read_zip_images(data, on_error=lambda name, error: told.update({name: error}))
    assert [name for name, _ in images] == ["good.png"]
    assert set(told) == {"corrupt.png", "encrypted.png", "deflate64.png"}
    assert all(isinstance(error, ev.ImageLoadError) for error in told.values())
    with pytest.raises(ev.ImageLoadError, match="cannot unpack 'corrupt.png'"):
        ev.io.read_zip_images(data)
    with pytest.raises(ev.ImageSetError, match="not a zip"):
        ev.io.read_zip_images(b"PK not really")


def test_a_nan_float_tiff_is_refused_by_name(tmp_path):
    """Regression (hardening round 4): a NaN float TIFF was refused without naming the file,
    where every other ImageLoadError names it."""
    path = tmp_path / "nan.tif"
    Image.fromarray(np.full((10, 10), np.nan, np.float32), mode="F").save(path)
    with pytest.raises(ev.ImageLoadError, match=r"nan\.tif: floating-point image holds NaN"):
        ev.load_image(path)


def test_loading_refuses_what_would_read_nothing_or_elsewhere(tmp_path, rng):
    """Regression: load_photos(max_side=0) gave 1x1 photos; pattern '../*' read the parent."""
    from PIL import Image

    (tmp_path / "people" / "alice").mkdir(parents=True)
    Image.new("RGB", (40, 30)).save(tmp_path / "people" / "alice" / "1.png")
    Image.new("RGB", (40, 30)).save(tmp_path / "outside.png")
    with pytest.raises(ValueError, match=r"max_side must lie in \[16, 16384\]"):
        ev.load_photos(tmp_path / "people", max_side=0)
    for pattern in ("../*", "alice/../../*", "..\\*"):
        with pytest.raises(ValueError, match="pattern matches file names inside each folder"):
            ev.load_photos(tmp_path / "people", pattern=pattern)
    photos, labels, _ = ev.load_photos(tmp_path / "people", pattern="*.png", max_side=16)
    assert labels.tolist() == ["alice"] and max(photos[0].shape[:2]) == 16


def test_batches_keep_to_a_pixel_budget(tmp_path, rng):
    """Regression: twelve 9000 x 9000 PNGs (0.9 MB on disk) made one 3.6 GiB batch. A batch now
    holds at most max_batch_pixels pixels (here six 300 x 300 images, two per batch)."""
    from PIL import Image

    for i in range(6):
        pixels = (rng.random((300, 300)) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(tmp_path / f"{i}.png")
    batches = list(ev.iter_image_batches(tmp_path, batch_size=4, max_batch_pixels=200_000))
    assert [len(b) for b in batches] == [2, 2, 2]
    assert all(b.size <= 200_000 for b in batches)
    whole = np.concatenate(list(ev.iter_image_batches(tmp_path, batch_size=4)))
    np.testing.assert_array_equal(np.concatenate(batches), whole)
