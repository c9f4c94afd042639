#pragma once
// A labels file a person edits in the studio (issue 62, item 2: nothing is
// lost): a class per image as a CSV of file,label,made_by (made_by: person,
// accepted or corrected, so that a training can weigh or audit them).
//  - Every change is appended at once to a journal beside it
//    (<labels>.journal, a JSON line per change) and on the disk (fsync)
//    before set() or clear() returns; opening replays the journal over the
//    CSV, so a kill -9 loses at most the change in flight (a torn last
//    line is left out).
//  - compact() folds the changes into the CSV (written whole, atomically)
//    and empties the journal.
//  - One store per labels file at a time: a second (another window, another
//    program of the studio's) is refused naming the process that holds it
//    (a flock on <labels>.lock, released however the holder ends).
//  - A CSV changed on disk by another program since the store read it is
//    never written over blindly: compact() reads it again, keeps its rows
//    where this store changed nothing, puts this store's changes on top,
//    and says what it merged.
// Torch-free. Thread: one thread at a time.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "studio/label_journal.h"

namespace studio {

struct ImageLabel {
  std::string label;
  std::string madeBy = "person";  // person | accepted | corrected
  bool operator==(const ImageLabel&) const = default;
};

class LabelStore {
 public:
  // Opens (creating neither until the first change) labelsCsv; replays its
  // journal. Throws InputError naming the file: held by another process, a
  // row without a file or label, a file named twice (the rows named), a
  // made_by that is none of the three; IoError when it cannot be read.
  explicit LabelStore(const std::string& labelsCsv);
  ~LabelStore();
  LabelStore(const LabelStore&) = delete;
  LabelStore& operator=(const LabelStore&) = delete;

  // Durable when they return (journal appended and fsynced).
  void set(const std::string& file, const std::string& label, const std::string& madeBy = "person");
  void clear(const std::string& file);

  const std::map<std::string, ImageLabel>& labels() const { return m_labels; }
  std::optional<ImageLabel> labelOf(const std::string& file) const;
  int64_t pendingChanges() const { return m_journal.pending(); }  // in the journal, not yet in the CSV
  // Whether the CSV differs from what this store last read or wrote.
  bool changedOnDisk() const { return m_journal.changedOnDisk(); }
  // Writes the CSV with every change and empties the journal; returns what
  // it merged from another program's edits ("" when the CSV was as read).
  std::string compact();

  const std::string& path() const { return m_path; }
  std::string journalPath() const { return m_journal.journalPath(); }

 private:
  // The CSV's rows (or none when it is missing).
  std::map<std::string, ImageLabel> readCsv() const;
  // The journal's changes over the CSV's rows (m_labels), kept in m_changes.
  void replayJournal();

  std::string m_path;
  LabelJournal m_journal;  // the lock, the journal, the CSV's bytes as read or written
  std::map<std::string, ImageLabel> m_labels;
  std::map<std::string, std::optional<ImageLabel>> m_changes;  // since the CSV was read or written (nullopt: cleared)
};

}  // namespace studio
