#pragma once
// A boxes file a person edits in the studio's Label tab (issue 62, items 1
// and 2): a COCO instances JSON (the format task.kind detection reads),
// through the same crash-ordered writes as the classes' labels file
// (studio/label_journal.h: each change fsynced in a journal before it
// returns, replayed on open; one editor at a time; another program's edits
// merged, never written over blindly).
// An image in the file with no boxes is labelled "nothing to find"; an
// image not in it is not labelled yet. Each box says who made it
// ("made_by": person, accepted, corrected), a key COCO readers ignore.
// Torch-free. Thread: one thread at a time.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "studio/box_annotations.h"  // BoxCategory
#include "studio/label_journal.h"

namespace studio {

struct LabelBox {
  double x = 0, y = 0, width = 0, height = 0;  // COCO's bbox, in the image's pixels
  int64_t category = 0;                        // a category's id
  std::string madeBy = "person";
  bool operator==(const LabelBox&) const = default;
};

struct ImageBoxes {
  int64_t width = 0, height = 0;  // the image's size, which the boxes lie within
  std::vector<LabelBox> boxes;
  bool operator==(const ImageBoxes&) const = default;
};

class BoxLabelStore {
 public:
  // Opens (creating neither until the first change) cocoJson; replays its
  // journal. Throws InputError naming the file and the entry (images[i],
  // annotations[i] with its id): another editor holds it, an image id or an
  // annotation id given twice, an annotation of an unknown image or
  // category, a box outside its image or without area, a made_by that is
  // none of the three; IoError when it cannot be read.
  explicit BoxLabelStore(const std::string& cocoJson);

  // Durable when they return. Throws InputError for a box outside the
  // image, of an unknown category, or an image without a size.
  void setBoxes(const std::string& file, const ImageBoxes& boxes);
  void clear(const std::string& file);  // not labelled any more
  // A new category (its id the next free one), or a category renamed.
  int64_t addCategory(const std::string& name);
  void renameCategory(int64_t id, const std::string& name);

  const std::map<std::string, ImageBoxes>& images() const { return m_images; }
  const std::vector<BoxCategory>& categories() const { return m_categories; }
  int64_t pendingChanges() const { return m_journal.pending(); }
  bool changedOnDisk() const { return m_journal.changedOnDisk(); }
  // Writes the COCO JSON with every change (images by file name, ids from
  // 1) and empties the journal; returns what it merged from another
  // program's edits ("" when the file was as read).
  std::string compact();
  std::string journalPath() const { return m_journal.journalPath(); }

 private:
  struct Contents {
    std::map<std::string, ImageBoxes> images;
    std::vector<BoxCategory> categories;
  };
  Contents parse(const std::string& bytes) const;
  void apply(const nlohmann::json& change, bool record);
  void check(const std::string& file, const ImageBoxes& boxes) const;

  std::string m_path;
  LabelJournal m_journal;
  std::map<std::string, ImageBoxes> m_images;
  std::vector<BoxCategory> m_categories;
  std::vector<nlohmann::json> m_changes;  // since the file was read or written
};

}  // namespace studio
