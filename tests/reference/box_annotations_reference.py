"""Box annotations in COCO, YOLO and Pascal VOC form, written as each tool
writes them, for test_box_annotations (make_references.py writes them under
OUT_DIR/box_annotations/): the same images and boxes in every format, with
an image without boxes, a crowd (COCO iscrowd, VOC difficult) and COCO
category ids that are not contiguous; expected.json lists every box in
pixels by format; bad/ holds one broken file per kind of bad input, with the
file the error must name and the words it must say.
"""
import json
import os

import numpy as np
from PIL import Image

NAMES = ["bird", "cat", "dog"]      # YOLO's index order and VOC's sorted names
COCO_IDS = {"bird": 3, "cat": 7, "dog": 11}


def scene(rng):
    images = []
    for i in range(6):
        w, h = int(rng.integers(40, 120)), int(rng.integers(30, 100))
        boxes = []
        for _ in range(0 if i == 2 else int(rng.integers(1, 4))):  # image 2: no boxes
            bw, bh = int(rng.integers(4, w // 2)), int(rng.integers(4, h // 2))
            x, y = int(rng.integers(0, w - bw)), int(rng.integers(0, h - bh))
            boxes.append({"name": NAMES[int(rng.integers(0, 3))], "box": [x, y, bw, bh], "crowd": False})
        images.append({"file": f"im{i}.png", "width": w, "height": h, "boxes": boxes})
    images[1]["boxes"][0]["crowd"] = True
    return images


def write_images(folder, images):
    os.makedirs(folder, exist_ok=True)
    for im in images:
        Image.new("RGB", (im["width"], im["height"]), (90, 120, 150)).save(os.path.join(folder, im["file"]))


def coco(images, ids=None):
    anns = []
    for k, im in enumerate(images):
        for b in im["boxes"]:
            anns.append({"id": len(anns) + 1, "image_id": 100 + k, "category_id": COCO_IDS[b["name"]],
                         "bbox": list(b["box"]), "area": b["box"][2] * b["box"][3] * 0.8, "iscrowd": int(b["crowd"])})
    return {"images": [{"id": 100 + k, "file_name": im["file"], "width": im["width"], "height": im["height"]}
                       for k, im in enumerate(images)],
            "annotations": anns,
            "categories": [{"id": i, "name": n} for n, i in sorted(COCO_IDS.items(), key=lambda t: -t[1])]}


def write_yolo(root, images):
    write_images(os.path.join(root, "images", "train"), images)
    os.makedirs(os.path.join(root, "labels", "train"), exist_ok=True)
    with open(os.path.join(root, "data.yaml"), "w") as f:
        f.write("path: .\ntrain: images/train\nnames:\n" + "".join(f"  {i}: {n}\n" for i, n in enumerate(NAMES)))
    for im in images:
        if not im["boxes"] and im["file"] == "im2.png":
            continue  # an image without a label file: a negative
        with open(os.path.join(root, "labels", "train", im["file"][:-4] + ".txt"), "w") as f:
            for b in im["boxes"]:
                x, y, w, h = b["box"]
                f.write(f"{NAMES.index(b['name'])} {(x + w / 2) / im['width']:.8f} {(y + h / 2) / im['height']:.8f} "
                        f"{w / im['width']:.8f} {h / im['height']:.8f}\n")


def voc_xml(im):
    objects = "".join(
        f"<object><name>{b['name']}</name><difficult>{int(b['crowd'])}</difficult><bndbox>"
        f"<xmin>{b['box'][0] + 1}</xmin><ymin>{b['box'][1] + 1}</ymin>"
        f"<xmax>{b['box'][0] + b['box'][2]}</xmax><ymax>{b['box'][1] + b['box'][3]}</ymax></bndbox></object>"
        for b in im["boxes"])
    return (f"<annotation><folder>x</folder><filename>{im['file']}</filename><size><width>{im['width']}</width>"
            f"<height>{im['height']}</height><depth>3</depth></size>{objects}</annotation>")


def write_box_annotations(out):
    rng = np.random.default_rng(43)
    images = scene(rng)
    base = os.path.join(out, "box_annotations")
    write_images(os.path.join(base, "images"), images)
    with open(os.path.join(base, "coco.json"), "w") as f:
        json.dump(coco(images), f)
    write_yolo(os.path.join(base, "yolo"), images)
    os.makedirs(os.path.join(base, "voc"), exist_ok=True)
    for im in images:
        with open(os.path.join(base, "voc", im["file"][:-4] + ".xml"), "w") as f:
            f.write(voc_xml(im))
    expected = [{"file": im["file"], "width": im["width"], "height": im["height"],
                 "boxes": [{"name": b["name"], "box": b["box"], "crowd": b["crowd"]} for b in im["boxes"]]}
                for im in images]

    # One broken file per bad input, each with what its error must say.
    bad = os.path.join(base, "bad")
    os.makedirs(bad, exist_ok=True)
    cases = []

    def coco_case(name, change, words):
        c = coco(images)
        change(c)
        with open(os.path.join(bad, name + ".json"), "w") as f:
            json.dump(c, f)
        cases.append({"file": name + ".json", "format": "coco", "names": name + ".json", "words": words})

    def past(c):
        im = c["images"][0]
        c["annotations"][0]["bbox"] = [im["width"] - 5, 1, 9, 4]  # 4 px past the right edge
    coco_case("past_the_image", past, ["annotations[0] (id 1)", "extends past its image"])
    coco_case("zero_width", lambda c: c["annotations"][1]["bbox"].__setitem__(2, 0),
              ["annotations[1] (id 2)", "has no width or height"])
    coco_case("unknown_category", lambda c: c["annotations"][2].__setitem__("category_id", 5),
              ["annotations[2] (id 3)", "category_id 5 is not one of the file's categories"])
    coco_case("missing_image", lambda c: c["annotations"][0].__setitem__("image_id", 999),
              ["annotations[0] (id 1)", "image_id 999 is not one of the file's images"])
    coco_case("absent_file", lambda c: c["images"][3].__setitem__("file_name", "gone.png"),
              ["images[3]", "gone.png does not exist"])
    for name, line, words in [("yolo_bad_line", "1 0.5 0.5 0.2\n", ["line 2", "is not \"class cx cy w h\""]),
                              ("yolo_bad_class", "0 0.5 0.5 0.2 0.2\n7 0.5 0.5 0.2 0.2\n",
                               ["line 2", "class 7 is not one of the 3 names"])]:
        root = os.path.join(bad, name)
        write_yolo(root, images[:1])
        with open(os.path.join(root, "labels", "train", "im0.txt"), "w") as f:
            f.write("0 0.5 0.5 0.2 0.2\n" + line if name == "yolo_bad_line" else line)
        cases.append({"file": name + "/data.yaml", "format": "yolo", "root": name + "/images",
                      "names": name + "/labels/train/im0.txt", "words": words})
    os.makedirs(os.path.join(bad, "voc_bad_number"), exist_ok=True)
    with open(os.path.join(bad, "voc_bad_number", "im0.xml"), "w") as f:
        f.write(voc_xml(images[0]).replace("<xmin>", "<xmin>ten", 1))
    cases.append({"file": "voc_bad_number", "format": "voc", "names": "voc_bad_number/im0.xml",
                  "words": ["<object> 1", "<xmin> is not a number"]})
    with open(os.path.join(base, "expected.json"), "w") as f:
        json.dump({"images": expected, "coco_ids": COCO_IDS, "names": NAMES, "bad": cases}, f)
    return {"folder": base}
