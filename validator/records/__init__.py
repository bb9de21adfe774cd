"""What a store holds, as typed documents with one JSON form each, and the one writer and one reader.

round_input.py, stored_round.py      what was asked and answered (the input contract; the stored input)
evaluation_record.py (+ recorded_config.py, task_section.py)   what the evaluation decided, as stored
lm_evidence.py                       what the LM's checks said (consensus.evidence), stored beside the round
writer.py, reader.py                 the one writer of a round's files, the one reader of a store's files
ledger_entries.py                    a record's entries for the ledger
replay_summary.py, whatif_report.py, failed_round.py, json_document.py
                                     the reports the commands write
"""
