// CSV tables: the delimiter and a header row are detected, quoted fields hold
// delimiters and newlines, the label column is found by name or index, and
// every mistake in a table (ragged rows, missing, non-numeric or NaN values,
// an unknown label column, one class) is named by file, row and column.
#include <fstream>

#include "test_support.h"

#include "studio/csv_table.h"
#include "studio/data_plan.h"

using namespace studio;

namespace {

std::string writeTable(const QTemporaryDir& dir, const QString& name, const std::string& text) {
  const std::string p = (dir.path() + "/" + name).toStdString();
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TrainConfig csvConfig(const std::string& file) {
  TrainConfig c;
  c.data.format = DataFormat::csv;
  c.data.root = file;
  c.model.kind = "mlp";
  return c;
}

}  // namespace

class TestCsvTable : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void delimiterAndHeaderAreDetected_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("delimiter");
    QTest::addColumn<QString>("first");
    QTest::newRow("comma with header") << "a,b,label\n1,2,x\n3,4,y\n"
                                       << ","
                                       << "a";
    QTest::newRow("semicolon, decimals") << "a;b;label\n1.5;2,0;x\n3;4;y\n"
                                         << ";"
                                         << "a";
    QTest::newRow("tab, no header") << "1\t2\tx\n3\t4\ty\n"
                                    << "\t"
                                    << "column 0";
    QTest::newRow("numeric labels, no header") << "0.5,1\n0.25,0\n"
                                               << ","
                                               << "column 0";
    QTest::newRow("byte-order mark and CRLF") << "\xEF\xBB\xBF"
                                                 "f,label\r\n1,a\r\n2,b\r\n"
                                              << ","
                                              << "f";
  }
  void delimiterAndHeaderAreDetected() {
    QFETCH(QString, text);
    QFETCH(QString, delimiter);
    QFETCH(QString, first);
    QTemporaryDir dir;
    const CsvTable t = readCsvTable(writeTable(dir, "t.csv", text.toStdString()));
    QCOMPARE(QString(QChar(t.delimiter)), delimiter);
    QCOMPARE(t.hasHeader, !first.startsWith("column"));
    QCOMPARE(t.rows.size(), size_t(2));
    QCOMPARE(QString::fromStdString(t.columns.front()), first);
    for (const auto& row : t.rows) QVERIFY(row.back().find('\r') == std::string::npos);  // CRLF ends a row
  }

  void quotedFieldsKeepDelimitersAndNewlines() {
    QTemporaryDir dir;
    const CsvTable t =
        readCsvTable(writeTable(dir, "q.csv", "id,note,x,label\n1,\"a, b\",0.5,cat\n2,\"two\nlines\",1.5,dog\n"));
    QCOMPARE(t.rows[0][1], std::string("a, b"));
    QCOMPARE(t.rows[1][1], std::string("two\nlines"));
    const TableColumns cols = selectColumns(t, "label", {"id", "note"});
    QCOMPARE(cols.featureNames, (std::vector<std::string>{"x"}));
    const NumericTable n = numericTable(t, cols);
    QCOMPARE(n.x, (std::vector<float>{0.5f, 1.5f}));
    QCOMPARE(n.labelText, (std::vector<std::string>{"cat", "dog"}));
  }

  // A file whose format says its first row names the columns (the audit's,
  // data.corrections'): a text-only table keeps that header, and one with no
  // rows after it reads as empty; what is written reads back the same.
  void aKnownHeaderAndFieldsThatReadBack() {
    QTemporaryDir dir;
    const std::string text = "file,action,label\nred/1.png,relabel,blue\n";
    QVERIFY(!readCsvTable(writeTable(dir, "g.csv", text)).hasHeader);  // guessed: no number tells it
    const CsvTable t = readCsvTable(writeTable(dir, "k.csv", text), CsvHeader::first_row);
    QVERIFY(t.hasHeader);
    QCOMPARE(t.columns, (std::vector<std::string>{"file", "action", "label"}));
    QCOMPARE(t.rows.size(), size_t(1));
    QCOMPARE(t.firstRowNumber, int64_t(2));
    QVERIFY(readCsvTable(writeTable(dir, "h.csv", "file,action,label\n"), CsvHeader::first_row).rows.empty());
    const std::vector<std::string> odd = {"plain", "a, b", "say \"hi\"", "two\nlines"};
    QCOMPARE(csvField(odd[0]), odd[0]);
    QCOMPARE(csvField(odd[2]), std::string("\"say \"\"hi\"\"\""));  // "say ""hi"""
    std::string line;
    for (const auto& f : odd) line += (line.empty() ? "" : ",") + csvField(f);
    const CsvTable back = readCsvTable(writeTable(dir, "w.csv", "a,b,c,d\n" + line + "\n"), CsvHeader::first_row);
    QCOMPARE(back.rows.front(), odd);
  }

  void labelColumnByNameIndexOrLast() {
    QTemporaryDir dir;
    const CsvTable t = readCsvTable(writeTable(dir, "l.csv", "species,w,h\nb,1,2\na,3,4\nb,5,6\n"));
    QCOMPARE(selectColumns(t, "species", {}).label, int64_t(0));
    QCOMPARE(selectColumns(t, "0", {}).label, int64_t(0));
    QCOMPARE(selectColumns(t, "", {}).label, int64_t(2));  // the last column
    const QString unknown = test::dataErrorOf([&] { selectColumns(t, "kind", {}); });
    QVERIFY2(unknown.contains("data.label_column \"kind\" is not a column") && unknown.contains("species, w, h"),
             qPrintable(unknown));
    QVERIFY(test::dataErrorOf([&] { selectColumns(t, "7", {}); }).contains("it has columns 0 to 2"));
    QVERIFY(test::dataErrorOf([&] { selectColumns(t, "species", {"w", "h"}); }).contains("no feature columns left"));
    QVERIFY(test::dataErrorOf([&] { selectColumns(t, "species", {"colour"}); }).contains("data.ignore_columns entry"));
  }

  void classNamesAreSorted() {
    QCOMPARE(classNamesOf({"dog", "cat", "dog", "ant"}), (std::vector<std::string>{"ant", "cat", "dog"}));
    QCOMPARE(classNamesOf({"10", "2", "1", "2"}), (std::vector<std::string>{"1", "2", "10"}));
  }

  void mistakesNameFileRowAndColumn_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("ragged row") << "a,b,label\n1,2,x\n3,y\n"
                                << "row 3 has 2 cells; row 1 has 3";
    QTest::newRow("missing value") << "a,b,label\n1,2,x\n3,,y\n"
                                   << "row 3, column \"b\": the value is missing";
    QTest::newRow("not a number") << "a,b,label\n1,2,x\n3,four,y\n"
                                  << "row 3, column \"b\": \"four\" is not a number";
    QTest::newRow("NaN") << "a,b,label\n1,2,x\nnan,4,y\n"
                         << "row 3, column \"a\": the value is NaN";
    QTest::newRow("infinite") << "a,b,label\n1,2,x\n1e999,4,y\n"
                              << "row 3, column \"a\": 1e999 is not a finite";
    QTest::newRow("missing label") << "a,b,label\n1,2,x\n3,4,\n"
                                   << "row 3, column \"label\": the label is missing";
    QTest::newRow("one class") << "a,label\n1,x\n2,x\n"
                               << "has 1 class (\"x\")";
    QTest::newRow("one column") << "label\nx\ny\n"
                                << "has 1 column";
    QTest::newRow("empty") << "\n\n"
                           << "is empty";
    QTest::newRow("unclosed quote") << "a,label\n1,\"x\n"
                                    << "is not valid CSV";
    // A 10 MB cell is named by its start and its length, never echoed whole.
    QTest::newRow("a huge cell") << "a,b,label\n1,2,x\n3," + QString(10'000'000, 'w') + ",y\n"
                                 << "row 3, column \"b\": \"" + QString(57, 'w') +
                                        "…\" (10000000 bytes) is not a number";
  }
  void mistakesNameFileRowAndColumn() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string file = writeTable(dir, "bad.csv", text.toStdString());
    const QString e = test::dataErrorOf([&] { planData(csvConfig(file)); });
    QVERIFY2(e.contains(QString::fromStdString(file)), qPrintable(e));
    QVERIFY2(e.contains(message), qPrintable(e.left(2000)));
    QVERIFY2(e.size() < 1000, qPrintable(e.left(2000)));
  }

  void planHoldsOutTestRowsOrReadsATestTable() {
    QTemporaryDir dir;
    std::string text = "id;x;y;label\n";
    for (int i = 0; i < 30; ++i)
      text += std::to_string(i) + ";" + std::to_string(i * 0.5) + ";" + std::to_string(i % 7) + ";" +
              (i % 3 == 0   ? "setosa"
               : i % 3 == 1 ? "versicolor"
                            : "virginica") +
              "\n";
    const std::string train = writeTable(dir, "train.csv", text);
    TrainConfig c = csvConfig(train);
    c.data.ignore_columns = {"id"};
    c.data.test_fraction = 0.2;
    DataPlan p = planData(c);
    QCOMPARE(p.classNames, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
    QCOMPARE(p.featureNames, (std::vector<std::string>{"x", "y"}));
    QCOMPARE(p.test.size(), int64_t(6));  // 2 of each class's 10
    QCOMPARE(p.train.size(), int64_t(24));
    QCOMPARE(exampleSource(p, 4), train + " row 6");
    // A separate test table; its unknown label is named with its row.
    c.data.test_file = writeTable(dir, "test.csv", "id;x;y;label\n100;1;2;setosa\n101;3;4;virginica\n");
    p = planData(c);
    QCOMPARE(p.test.size(), int64_t(2));
    QCOMPARE(p.train.size(), int64_t(30));
    QCOMPARE(exampleSource(p, p.test.items[1]), c.data.test_file + " row 3");
    c.data.test_file = writeTable(dir, "test2.csv", "id;x;y;label\n100;1;2;setosa\n101;3;4;rosa\n");
    QVERIFY(test::dataErrorOf([&] { planData(c); }).contains("row 3 has label \"rosa\", which the training table"));
  }
};

QTEST_GUILESS_MAIN(TestCsvTable)
#include "test_csv_table.moc"
